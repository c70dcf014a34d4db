import { Module } from '@nestjs/common';
import { MemoryReclaimer } from './memory-reclaimer';

@Module({ providers: [MemoryReclaimer] })
export class MemoryModule {}
