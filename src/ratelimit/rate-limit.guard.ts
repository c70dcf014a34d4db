import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-client';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { AuthedRequest } from '../auth/current-user.decorator';
import { AppError } from '../common/error-codes';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { InjectRedis } from '../redis/redis.token';

/**
 * The count as rate-limiter-flexible keeps it (a window of `duration` seconds from the first
 * request), in fewer calls than its own script's SET NX + INCRBY + PTTL on every request: the
 * key's expiry is set only by the request that made it, and its lifetime is read only when the
 * answer is a refusal (Retry-After needs it). Same reply: { consumed, ms before the next window }.
 */
const INCR_TTL_LUA = `local consumed = redis.call('incrby', KEYS[1], ARGV[1])
if consumed == tonumber(ARGV[1]) then
  redis.call('expire', KEYS[1], ARGV[2])
  return { consumed, 1000 * ARGV[2] }
end
if consumed <= tonumber(ARGV[3]) then return { consumed, 0 } end
return { consumed, redis.call('pttl', KEYS[1]) }`;

/**
 * RATE_LIMIT_PER_SECOND per student on the queue and enroll routes, counted in Redis so the
 * limit holds across instances, and keyed by the student so one student's flood never uses
 * another's allowance. Runs after the JWT guard, which put the student on the request.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly limiter?: RateLimiterRedis;

  constructor(@InjectRedis() redis: RedisClient, @Inject(APP_CONFIG) config: AppConfig) {
    if (config.rateLimitPerSecond > 0) {
      this.limiter = new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: 'ratelimit',
        points: config.rateLimitPerSecond,
        duration: 1,
        customIncrTtlLuaScript: INCR_TTL_LUA,
      });
    }
  }

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const user = ctx.switchToHttp().getRequest<AuthedRequest>().user;
    if (!this.limiter || !user) return true;
    try {
      await this.limiter.consume(user.id);
      return true;
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res; // Redis is down: the filter answers 503
      const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw new AppError(
        'RATE_LIMITED',
        `over ${this.limiter.points} requests per second; retry in ${seconds} s`,
        {
          'Retry-After': String(seconds),
        },
      );
    }
  }
}
