import { Module } from '@nestjs/common';
import { AdmissionChannel } from './admission-channel';

/**
 * The cross-instance news bus: "a slot may have freed", "these students' status changed",
 * "admitted", "a stream opened", "drawn" — published by whichever instance caused it and heard
 * by every instance (one Pub/Sub subscription each; sharded per lecture on a cluster).
 */
@Module({ providers: [AdmissionChannel], exports: [AdmissionChannel] })
export class NewsModule {}
