import { Module } from '@nestjs/common';
import { LineStore } from './line.store';

/** A lecture's line and tickets in Redis: below every module that moves or reads them. */
@Module({ providers: [LineStore], exports: [LineStore] })
export class LineModule {}
