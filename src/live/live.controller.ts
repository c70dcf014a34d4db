import { Controller, Get, Headers, Param, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiErrors } from '../docs/api-errors.decorator';
import { MetricsService } from '../metrics/metrics.service';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { QueueStreams } from './queue-streams.service';
import { answerStream } from './stream-reply';
import { LiveStatsView, StatsStreams } from './stats-streams.service';

const ROUTE = '/lectures/:id/queue/events';
const STATS_ROUTE = '/lectures/:id/stats/events';

@ApiTags('queue')
@Controller('lectures/:id')
export class LiveController {
  constructor(
    private readonly streams: QueueStreams,
    private readonly stats: StatsStreams,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Server-Sent Events: `event: status` with the student's QueueStatus at once, then whenever
   * it changes; `: keep-alive` comments; `event: error` (CLOSED) when the lecture closes;
   * `event: reconnect` when this instance shuts down. Ends after ENROLLED, after WAITING with
   * seatsLeft 0 in a lecture whose admission.waitlist is 0 (above 0 a seat given back admits the
   * head: the stream stays open), and when the same student opens a newer stream for the
   * lecture. Every event has an `id:`; a reconnect (Last-Event-ID) while the status is one the
   * stream ends on is answered 204, which tells a standard EventSource client to stop. Opening
   * counts as one request for the rate limit; 503 UNAVAILABLE with Retry-After when this
   * instance holds MAX_STREAMS.
   */
  @ApiProduces('text/event-stream')
  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND', 'SECONDARY_SECTION', 'CLOSED', 'RATE_LIMITED')
  @ApiResponse({ status: 204, description: 'a reconnect to a stream that has ended for good' })
  @ApiOperation({ summary: 'Follow my queue status live (Server-Sent Events)' })
  @Get('queue/events')
  @UseGuards(RateLimitGuard)
  @Roles('student')
  async queueEvents(
    @Param('id', ParseIdPipe) id: number,
    @CurrentUser() user: AuthUser,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const opened = this.streams.open(
      id,
      user.id,
      reply.raw,
      () => reply.hijack(),
      lastEventId !== undefined,
    );
    await answerStream(opened, reply, (seconds) =>
      this.metrics.request('GET', ROUTE, 200, seconds),
    );
  }

  /**
   * Server-Sent Events for admins: `event: stats` at once and then once a second, with the
   * figures of GET /lectures/{id}/stats plus `admittedPerSecond` over the last 10 s;
   * `event: reconnect` when this instance shuts down.
   */
  @ApiProduces('text/event-stream')
  @ApiResponse({ status: 200, type: LiveStatsView, description: 'the data of each `event: stats`' })
  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND')
  @ApiOperation({ summary: "Follow a lecture's stats live (Server-Sent Events)" })
  @Get('stats/events')
  @Roles('admin')
  async statsEvents(
    @Param('id', ParseIdPipe) id: number,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const openedAt = Date.now();
    const sse = await this.stats.open(id, reply.raw, () => reply.hijack());
    sse?.onClose(() =>
      this.metrics.request('GET', STATS_ROUTE, 200, (Date.now() - openedAt) / 1000),
    );
  }
}
