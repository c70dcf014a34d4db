import { Controller, Get, Param, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { ApiErrors } from '../docs/api-errors.decorator';
import { MetricsService } from '../metrics/metrics.service';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { ParseTermPipe } from '../terms/term-params';
import { answerStream } from './stream-reply';
import { TermStreams } from './term-streams.service';

const ROUTE = '/me/terms/:term/events';

@ApiTags('plan')
@Controller('me/terms/:term')
export class TermEventsController {
  constructor(
    private readonly streams: TermStreams,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Server-Sent Events for my lectures of the term: the plan's, and those I am pre-queued,
   * waiting, admitted or enrolled in — no others. At once one `event: status` (a QueueStatus)
   * per lecture, then one whenever any changes; `: keep-alive` comments; `event: reconnect`
   * when this instance shuts down. Lectures planned or joined later join the stream; a lecture
   * taken out of the plan that I am not in, or left while not planned, leaves it (a left one
   * after its `NOT_QUEUED`). A closed lecture is sent once as `event: error`
   * `{ lectureId, error }` and followed no further. A lecture leaves something to wait for while
   * it is planned with a seat left (every seat is left before it opens), or I am pre-queued,
   * waiting with a seat left (or without one in a lecture whose admission.waitlist is above 0),
   * or admitted. When nothing is left the stream sends `event: end` and ends; an opening then,
   * with or without Last-Event-ID, is answered 204. Of two streams opened a moment apart, the
   * one opened last stays. One request for the rate limit, one place under MAX_STREAMS.
   */
  @ApiProduces('text/event-stream')
  @ApiErrors('FORBIDDEN', 'RATE_LIMITED')
  @ApiResponse({
    status: 204,
    description: 'nothing is left to wait for in my lectures of the term (a reconnect or not)',
  })
  @ApiOperation({
    summary: 'Follow all my lectures of a term live, on one stream (Server-Sent Events)',
  })
  @Get('events')
  @UseGuards(RateLimitGuard)
  @Roles('student')
  async termEvents(
    @Param('term', ParseTermPipe) term: string,
    @CurrentUser() user: AuthUser,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const opened = this.streams.open(term, user.id, reply.raw, () => reply.hijack());
    await answerStream(opened, reply, (seconds) =>
      this.metrics.request('GET', ROUTE, 200, seconds),
    );
  }
}
