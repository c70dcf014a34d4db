import { Controller, Get, Res } from '@nestjs/common';
import { HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/roles.decorator';
import { ErrorBodyDoc } from '../docs/schemas';
import { HealthBody } from './health.view';
import { RedisHealthIndicator } from './redis.health';

@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly redis: RedisHealthIndicator,
  ) {}

  @ApiOperation({ summary: 'Check PostgreSQL and Redis' })
  @Get()
  @Public()
  @ApiResponse({ status: 200, type: HealthBody, description: 'both stores up' })
  @ApiResponse({
    status: 503,
    type: HealthBody,
    description: 'a store is down; it is marked down in checks',
  })
  @ApiResponse({
    status: 400,
    type: ErrorBodyDoc,
    description:
      'code: VALIDATION_FAILED (a malformed request: a bad URL encoding, no Host header)',
  })
  async check(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthBody> {
    const result = await this.health
      .check([
        () => this.db.pingCheck('postgres', { timeout: 1500 }),
        () => this.redis.pingCheck('redis'),
      ])
      // Terminus throws a 503 whose response is the same result object; we only need it.
      .catch((err: { getResponse?: () => unknown }) => err.getResponse?.() as HealthCheckResult);
    const details = (result?.details ?? {}) as Record<string, { status?: string }>;
    const checks = {
      postgres: details.postgres?.status === 'up' ? 'up' : 'down',
      redis: details.redis?.status === 'up' ? 'up' : 'down',
    } as const;
    const healthy = checks.postgres === 'up' && checks.redis === 'up';
    reply.status(healthy ? 200 : 503);
    return { status: healthy ? 'ok' : 'error', checks };
  }
}
