import { Module } from '@nestjs/common';
import { LecturesModule } from '../lectures/lectures.module';
import { LineModule } from '../line/line.module';
import { NewsModule } from '../news/news.module';
import { PlansModule } from '../plans/plans.module';
import { QueueModule } from '../queue/queue.module';
import { LiveController } from './live.controller';
import { QueueStreams } from './queue-streams.service';
import { StatsStreams } from './stats-streams.service';
import { StreamSlots } from './stream-slots';
import { TermEventsController } from './term-events.controller';
import { TermStreams } from './term-streams.service';
import { Watches } from './watches.service';

/** Server push: students' live queue and term streams, and admins' live stats. */
@Module({
  imports: [LecturesModule, LineModule, NewsModule, QueueModule, PlansModule],
  controllers: [LiveController, TermEventsController],
  providers: [Watches, QueueStreams, TermStreams, StatsStreams, StreamSlots],
  exports: [QueueStreams, TermStreams, StatsStreams, StreamSlots],
})
export class LiveModule {}
