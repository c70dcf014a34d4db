import { Module } from '@nestjs/common';
import { LineModule } from '../line/line.module';
import { NewsModule } from '../news/news.module';
import { QueueModule } from '../queue/queue.module';
import { PlansController } from './plans.controller';
import { PlansService } from './plans.service';

/** A student's plan for a term, and joining it all in one request. */
@Module({
  imports: [QueueModule, LineModule, NewsModule],
  controllers: [PlansController],
  providers: [PlansService],
  exports: [PlansService],
})
export class PlansModule {}
