import { Module } from '@nestjs/common';
import { RecordsService } from './records.service';
import { RegistrationCache } from './registration-cache';
import { RegistrationController } from './registration.controller';
import { RegistrationService } from './registration.service';
import { RegistrationStore } from './registration.store';
import { StudentHoldsService } from './student-holds.service';
import { WindowsService } from './windows.service';

/** Who may register when (API.md v4): student records, windows, holds, the join's gate. */
@Module({
  controllers: [RegistrationController],
  providers: [
    RegistrationStore,
    RegistrationCache,
    RecordsService,
    WindowsService,
    StudentHoldsService,
    RegistrationService,
  ],
  exports: [RegistrationService, RegistrationCache, WindowsService],
})
export class RegistrationModule {}
