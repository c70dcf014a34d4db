import { Module } from '@nestjs/common';
import { EnrollModule } from '../enroll/enroll.module';
import { LecturesModule } from '../lectures/lectures.module';
import { LineModule } from '../line/line.module';
import { NewsModule } from '../news/news.module';
import { QueueModule } from '../queue/queue.module';
import { RegistrationModule } from '../registration/registration.module';
import { AutoEnroller } from './auto-enroller';
import { ClaimStore } from './claims.store';
import { Clearance } from './clearance';
import { TimetableFit } from './timetable-fit';

/** The service enrolling students itself when their turn comes (API.md v4). */
@Module({
  imports: [EnrollModule, QueueModule, LecturesModule, LineModule, NewsModule, RegistrationModule],
  providers: [AutoEnroller, TimetableFit, Clearance, ClaimStore],
})
export class AutoEnrollModule {}
