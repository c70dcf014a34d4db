import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { LecturesModule } from '../lectures/lectures.module';
import { AdmissionService } from './admission.service';
import { QueueController } from './queue.controller';
import { QueueService } from './queue.service';
import { QueueStore } from './queue.store';

@Module({
  imports: [ScheduleModule.forRoot(), LecturesModule],
  controllers: [QueueController],
  providers: [QueueService, QueueStore, AdmissionService],
  exports: [QueueStore, AdmissionService],
})
export class QueueModule {}
