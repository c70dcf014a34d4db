import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { FairnessModule } from '../fairness/fairness.module';
import { LecturesModule } from '../lectures/lectures.module';
import { AdmissionChannel } from './admission-channel';
import { AdmissionService } from './admission.service';
import { HoldRecovery } from './hold-recovery.service';
import { QueueController } from './queue.controller';
import { QueueService } from './queue.service';
import { QueueStore } from './queue.store';
import { TicketStore } from './ticket.store';

@Module({
  imports: [ScheduleModule.forRoot(), LecturesModule, FairnessModule],
  controllers: [QueueController],
  providers: [
    QueueService,
    QueueStore,
    TicketStore,
    AdmissionService,
    AdmissionChannel,
    HoldRecovery,
  ],
  exports: [QueueService, QueueStore, TicketStore, AdmissionService, AdmissionChannel],
})
export class QueueModule {}
