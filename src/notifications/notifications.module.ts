import { Global, Module } from '@nestjs/common';
import { ContactBook } from './contact-book';
import { NotificationSender } from './notification.sender';
import { NotificationsController } from './notifications.controller';
import { NotificationsService } from './notifications.service';

/** Global: every cause of a mail (seat transactions, admissions, the guard's addresses) records here. */
@Global()
@Module({
  controllers: [NotificationsController],
  providers: [NotificationsService, NotificationSender, ContactBook],
  exports: [NotificationsService],
})
export class NotificationsModule {}
