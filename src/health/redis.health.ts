import { InjectRedis } from '../redis/redis.token';
import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Cluster } from 'ioredis';
import type { RedisClient } from '../redis/redis-client';

@Injectable()
export class RedisHealthIndicator {
  constructor(
    @InjectRedis() private readonly redis: RedisClient,
    private readonly indicator: HealthIndicatorService,
  ) {}

  async pingCheck(key: string) {
    const check = this.indicator.check(key);
    try {
      if (this.redis instanceof Cluster) {
        // A cluster is up while its state is ok: every slot served by a reachable master.
        const info = (await this.redis.cluster('INFO')) as string;
        if (!/cluster_state:ok/.test(info))
          return check.down({ message: 'cluster_state is not ok' });
      } else {
        await this.redis.ping();
      }
      return check.up();
    } catch (err) {
      return check.down({ message: err instanceof Error ? err.message : String(err) });
    }
  }
}
