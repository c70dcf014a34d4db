import { Controller, Get, Res } from '@nestjs/common';
import { HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/roles.decorator';
import { RedisHealthIndicator } from './redis.health';

type Check = 'up' | 'down';
export class HealthBody {
  status: 'ok' | 'error';
  checks: { postgres: Check; redis: Check };
}

@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly redis: RedisHealthIndicator,
  ) {}

  @Get()
  @Public()
  @ApiResponse({ status: 200, description: 'both stores up' })
  @ApiResponse({ status: 503, description: 'a store is down; it is marked down in checks' })
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
