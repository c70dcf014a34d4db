import { Module } from '@nestjs/common';
import { LecturesModule } from '../lectures/lectures.module';
import { LineModule } from '../line/line.module';
import { NewsModule } from '../news/news.module';
import { QueueModule } from '../queue/queue.module';
import { EnrollController } from './enroll.controller';
import { EnrollService } from './enroll.service';
import { SeatTransactions } from './seat.transactions';

@Module({
  imports: [LecturesModule, LineModule, NewsModule, QueueModule],
  controllers: [EnrollController],
  providers: [EnrollService, SeatTransactions],
})
export class EnrollModule {}
