import { Module } from '@nestjs/common';
import { HoldsModule } from '../holds/holds.module';
import { LecturesModule } from '../lectures/lectures.module';
import { NewsModule } from '../news/news.module';
import { QueueModule } from '../queue/queue.module';
import { EnrollController } from './enroll.controller';
import { EnrollService } from './enroll.service';
import { SeatTransactions } from './seat.transactions';

@Module({
  imports: [HoldsModule, LecturesModule, NewsModule, QueueModule],
  controllers: [EnrollController],
  providers: [EnrollService, SeatTransactions],
  exports: [EnrollService],
})
export class EnrollModule {}
