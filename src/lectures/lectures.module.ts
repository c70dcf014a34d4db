import { Module } from '@nestjs/common';
import { LecturesController } from './lectures.controller';
import { LectureFactsService } from './lecture-facts.service';
import { LecturesService } from './lectures.service';

@Module({
  controllers: [LecturesController],
  providers: [LecturesService, LectureFactsService],
  exports: [LecturesService, LectureFactsService],
})
export class LecturesModule {}
