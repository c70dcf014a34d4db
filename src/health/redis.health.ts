import { InjectRedis } from '../redis/redis.token';
import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { Redis } from 'ioredis';

@Injectable()
export class RedisHealthIndicator {
  constructor(
    @InjectRedis() private readonly redis: Redis,
    private readonly indicator: HealthIndicatorService,
  ) {}

  async pingCheck(key: string) {
    const check = this.indicator.check(key);
    try {
      await this.redis.ping();
      return check.up();
    } catch (err) {
      return check.down({ message: err instanceof Error ? err.message : String(err) });
    }
  }
}
