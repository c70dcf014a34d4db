import { Module } from '@nestjs/common';
import { LecturesModule } from '../lectures/lectures.module';
import { LineModule } from '../line/line.module';
import { NewsModule } from '../news/news.module';
import { HoldRecovery } from './hold-recovery';
import { HoldTransactions } from './hold.transactions';
import { Holds } from './holds.service';
import { SeatReleases } from './seat-releases';

/** An enroll's hold on both stores, and the seats given back, until Redis has recorded them. */
@Module({
  imports: [LecturesModule, LineModule, NewsModule],
  providers: [Holds, HoldRecovery, HoldTransactions, SeatReleases],
  exports: [Holds],
})
export class HoldsModule {}
