import { Module } from '@nestjs/common';
import { LecturesModule } from '../lectures/lectures.module';
import { LineModule } from '../line/line.module';
import { NewsModule } from '../news/news.module';
import { RegistrationModule } from '../registration/registration.module';
import { AdmissionLogCopier } from './admission-log.copier';
import { AdmissionLogStore } from './admission-log.store';
import { DrawSeeds } from './draw-seeds';
import { DrawRecorder } from './draw.recorder';
import { DrawScheduler } from './draw.scheduler';
import { WindowDrawRecorder } from './window-draw.recorder';
import { FairnessController } from './fairness.controller';
import { FairnessRecords } from './fairness.records';
import { FairnessService } from './fairness.service';

/** The fair opening: pre-queue members, when the draw runs and its record, the admission log's copy. */
@Module({
  imports: [LecturesModule, LineModule, NewsModule, RegistrationModule],
  controllers: [FairnessController],
  providers: [
    DrawSeeds,
    DrawRecorder,
    WindowDrawRecorder,
    DrawScheduler,
    AdmissionLogStore,
    AdmissionLogCopier,
    FairnessRecords,
    FairnessService,
  ],
  exports: [DrawSeeds, DrawScheduler, AdmissionLogStore, AdmissionLogCopier],
})
export class FairnessModule {}
