import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { FairnessModule } from '../fairness/fairness.module';
import { HoldsModule } from '../holds/holds.module';
import { LecturesModule } from '../lectures/lectures.module';
import { LineModule } from '../line/line.module';
import { NewsModule } from '../news/news.module';
import { RegistrationModule } from '../registration/registration.module';
import { AdmissionService } from './admission.service';
import { ObservedRates } from './observed-rates';
import { QueueController } from './queue.controller';
import { QueueService } from './queue.service';
import { AutoEnrollStore } from '../auto-enroll/auto-enroll.store';
import { AutoEnrollRoom } from './auto-enroll-room';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LecturesModule,
    FairnessModule,
    HoldsModule,
    LineModule,
    NewsModule,
    RegistrationModule,
  ],
  controllers: [QueueController],
  providers: [QueueService, AdmissionService, ObservedRates, AutoEnrollStore, AutoEnrollRoom],
  exports: [QueueService, AdmissionService, AutoEnrollStore, AutoEnrollRoom],
})
export class QueueModule {}
