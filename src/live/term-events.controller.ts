import { Controller, Get, Headers, Param, Res, UseGuards } from '@nestjs/common';
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
   * Server-Sent Events for all my lectures of the term — the plan's, and those I am
   * pre-queued, waiting, admitted or enrolled in: at once one `event: status` (a QueueStatus)
   * per lecture, then one whenever any changes; `event: error` `{ lectureId, error }` when a
   * lecture closes; `: keep-alive` comments; `event: reconnect` when this instance shuts down.
   * Lectures planned or joined later join the stream. The newest stream per student and term
   * wins. It ends when nothing is left to wait for in any of its lectures (each held, closed,
   * or without a seat left while no ticket is held); a reconnect (Last-Event-ID) then is
   * answered 204. One request for the rate limit, one place under MAX_STREAMS.
   */
  @ApiProduces('text/event-stream')
  @ApiErrors('FORBIDDEN', 'RATE_LIMITED')
  @ApiResponse({ status: 204, description: 'a reconnect to a stream that has ended for good' })
  @ApiOperation({
    summary: 'Follow all my lectures of a term live, on one stream (Server-Sent Events)',
  })
  @Get('events')
  @UseGuards(RateLimitGuard)
  @Roles('student')
  async termEvents(
    @Param('term', ParseTermPipe) term: string,
    @CurrentUser() user: AuthUser,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const opened = this.streams.open(
      term,
      user.id,
      reply.raw,
      () => reply.hijack(),
      lastEventId !== undefined,
    );
    await answerStream(opened, reply, (seconds) =>
      this.metrics.request('GET', ROUTE, 200, seconds),
    );
  }
}
