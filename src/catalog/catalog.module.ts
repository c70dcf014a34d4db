import { Module } from '@nestjs/common';
import { LecturesModule } from '../lectures/lectures.module';
import { CatalogController } from './catalog.controller';
import { CatalogService } from './catalog.service';
import { RosterService } from './roster.service';

/** The registrar's side of a term: its catalog imported and exported, a lecture's roster. */
@Module({
  imports: [LecturesModule],
  controllers: [CatalogController],
  providers: [CatalogService, RosterService],
})
export class CatalogModule {}
