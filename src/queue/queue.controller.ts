import {
  Body,
  UseGuards,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Res,
} from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../docs/api-errors.decorator';
import { GATE_CODES } from '../rules';
import type { FastifyReply } from 'fastify';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { QueueStatusView } from './queue-status.view';
import { QueueService, LectureStats } from './queue.service';
import { JoinBodyDto, autoOf } from './join.dto';
import { AppError } from '../common/error-codes';

@ApiTags('queue')
@Controller('lectures/:id')
export class QueueController {
  constructor(private readonly queue: QueueService) {}

  /** 201 on first join; 200 with the unchanged place when already waiting, admitted or enrolled. */
  @ApiErrors(
    'FORBIDDEN',
    'VALIDATION_FAILED',
    'LECTURE_NOT_FOUND',
    'SECONDARY_SECTION',
    ...GATE_CODES,
    'NOT_OPEN',
    'CLOSED',
    'FULL',
    'RATE_LIMITED',
  )
  @ApiOperation({
    summary: 'Join the queue (or, before opening, the pre-queue)',
    description:
      'Refused in this order: LECTURE_NOT_FOUND, SECONDARY_SECTION, HOLD (a hold blocks registration; ' +
      'the body adds holds), the window (WINDOW_CLOSED, or WINDOW_NOT_OPEN with opensAt unless the join ' +
      "falls within preQueueMinutes before the student's opening: it pre-queues for their window's draw), " +
      "then the lecture's own (CLOSED, NOT_OPEN, FULL). A student's opening is the later of the lecture's " +
      'opensAt and the earliest opening of a window of theirs that has not closed. ' +
      'With autoEnroll the service enrolls the student itself when they are admitted (with sections ' +
      'and swapFrom as an enroll would); a refusal gives the place up and lastRefusal says why.',
  })
  // A plain join sends no body.
  @ApiBody({ type: JoinBodyDto, required: false })
  @ApiResponse({
    status: 201,
    type: QueueStatusView,
    description: 'joined: WAITING, ADMITTED (admitted at once) or PRE_QUEUED (before opensAt)',
  })
  @ApiResponse({
    status: 200,
    type: QueueStatusView,
    description: 'already pre-queued, waiting, admitted or enrolled: the place, unchanged',
  })
  @Post('queue')
  @UseGuards(RateLimitGuard)
  @Roles('student')
  async join(
    @Param('id', ParseIdPipe) id: number,
    @CurrentUser() user: AuthUser,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body?: JoinBodyDto,
  ): Promise<QueueStatusView> {
    if (body?.swapFrom === id) {
      throw new AppError('VALIDATION_FAILED', 'swapFrom must be another lecture than the one joined'); // prettier-ignore
    }
    const { created, status } = await this.queue.join(id, user.id, { auto: autoOf(body) });
    reply.status(created ? 201 : 200);
    return status;
  }

  /** Once the window has closed: 409 CLOSED, unless the student holds a seat (ENROLLED). */
  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND', 'SECONDARY_SECTION', 'CLOSED', 'RATE_LIMITED')
  @ApiOperation({ summary: 'Read my queue status' })
  @Get('queue')
  @UseGuards(RateLimitGuard)
  @Roles('student')
  status(
    @Param('id', ParseIdPipe) id: number,
    @CurrentUser() user: AuthUser,
  ): Promise<QueueStatusView> {
    return this.queue.status(id, user.id);
  }

  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND', 'SECONDARY_SECTION', 'RATE_LIMITED')
  @ApiOperation({ summary: 'Leave the queue or hand back a ticket' })
  @Delete('queue')
  @UseGuards(RateLimitGuard)
  @HttpCode(204)
  @Roles('student')
  async leave(@Param('id', ParseIdPipe) id: number, @CurrentUser() user: AuthUser): Promise<void> {
    await this.queue.leave(id, user.id);
  }

  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND')
  @ApiOperation({ summary: "Read a lecture's queue and seat figures" })
  @Get('stats')
  @Roles('admin')
  stats(@Param('id', ParseIdPipe) id: number): Promise<LectureStats> {
    return this.queue.stats(id);
  }
}
