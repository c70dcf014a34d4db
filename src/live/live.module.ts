import { Module } from '@nestjs/common';
import { LecturesModule } from '../lectures/lectures.module';
import { LineModule } from '../line/line.module';
import { NewsModule } from '../news/news.module';
import { QueueModule } from '../queue/queue.module';
import { LiveController } from './live.controller';
import { QueueStreams } from './queue-streams.service';
import { StatsStreams } from './stats-streams.service';
import { StreamSlots } from './stream-slots';

/** Server push: students' live queue streams and admins' live stats. */
@Module({
  imports: [LecturesModule, LineModule, NewsModule, QueueModule],
  controllers: [LiveController],
  providers: [QueueStreams, StatsStreams, StreamSlots],
  exports: [QueueStreams, StatsStreams, StreamSlots],
})
export class LiveModule {}
