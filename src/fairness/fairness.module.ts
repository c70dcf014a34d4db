import { Module } from '@nestjs/common';
import { LineModule } from '../line/line.module';
import { AdmissionLogCopier } from './admission-log.copier';
import { AdmissionLogStore } from './admission-log.store';
import { DrawSeeds } from './draw-seeds';
import { DrawRecorder } from './draw.recorder';
import { FairnessController } from './fairness.controller';
import { FairnessRecords } from './fairness.records';
import { FairnessService } from './fairness.service';

/** The fair opening: pre-queue members, the draw's record, and the admission log's copy. */
@Module({
  imports: [LineModule],
  controllers: [FairnessController],
  providers: [
    DrawSeeds,
    DrawRecorder,
    AdmissionLogStore,
    AdmissionLogCopier,
    FairnessRecords,
    FairnessService,
  ],
  exports: [DrawSeeds, DrawRecorder, AdmissionLogStore, AdmissionLogCopier],
})
export class FairnessModule {}
