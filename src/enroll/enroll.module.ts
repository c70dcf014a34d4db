import { Module } from '@nestjs/common';
import { LecturesModule } from '../lectures/lectures.module';
import { EnrollController } from './enroll.controller';
import { EnrollService } from './enroll.service';
import { SeatTransactions } from './seat.transactions';
import { TicketStore } from './ticket.store';

@Module({
  imports: [LecturesModule],
  controllers: [EnrollController],
  providers: [EnrollService, SeatTransactions, TicketStore],
})
export class EnrollModule {}
