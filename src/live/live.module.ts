import { Module } from '@nestjs/common';
import { LecturesModule } from '../lectures/lectures.module';
import { QueueModule } from '../queue/queue.module';
import { LiveController } from './live.controller';
import { QueueStreams } from './queue-streams.service';

/** Server push: live queue streams (and, later, live stats). */
@Module({
  imports: [LecturesModule, QueueModule],
  controllers: [LiveController],
  providers: [QueueStreams],
  exports: [QueueStreams],
})
export class LiveModule {}
