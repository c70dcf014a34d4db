import { Module } from '@nestjs/common';
import { LineModule } from '../line/line.module';
import { LectureEvents } from './lecture-events';
import { LectureFactsService } from './lecture-facts.service';
import { LectureFactsStore } from './lecture-facts.store';
import { LectureSnapshots } from './lecture.snapshots';
import { OrderFence } from './order-fence';
import { SeatWatch } from './seat-watch';
import { LecturesController } from './lectures.controller';
import { LecturesService } from './lectures.service';

@Module({
  imports: [LineModule],
  controllers: [LecturesController],
  providers: [
    LecturesService,
    LectureFactsService,
    LectureFactsStore,
    LectureSnapshots,
    LectureEvents,
    OrderFence,
    SeatWatch,
  ],
  exports: [
    LecturesService,
    LectureFactsService,
    LectureSnapshots,
    LectureEvents,
    OrderFence,
    SeatWatch,
  ],
})
export class LecturesModule {}
