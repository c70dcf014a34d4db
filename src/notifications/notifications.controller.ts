import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { ApiErrors } from '../docs/api-errors.decorator';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { NotificationsService } from './notifications.service';
import { NotificationsView } from './notifications.view';

@ApiTags('notifications')
@Controller()
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @ApiErrors('FORBIDDEN', 'RATE_LIMITED')
  @ApiOperation({
    summary: 'My e-mail notifications, the last 50, newest first',
    description:
      'Mails go to the `email` claim of the last token seen; `sentAt` is null until the mail ' +
      'server accepted one (and stays null when no address was known).',
  })
  @Get('me/notifications')
  @Roles('student')
  @UseGuards(RateLimitGuard)
  mine(@CurrentUser() user: AuthUser): Promise<NotificationsView> {
    return this.notifications.list(user.id);
  }
}
