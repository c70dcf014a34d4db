import { RedisModule as NestRedisModule, RedisService } from '@liaoliaots/nestjs-redis';
import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { AdmissionChannel } from './admission-channel';
import { defineScripts } from './lua-scripts';
import { REDIS } from './redis.token';
import './script-commands';

/**
 * The shared command connection. Commands fail fast when Redis is down (one retry, short
 * time-outs) so that a request answers 503 instead of waiting for a reconnect.
 */
@Global()
@Module({
  imports: [
    NestRedisModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (...args: unknown[]) => {
        const config = args[0] as AppConfig;
        return {
          closeClient: true,
          errorLog: false,
          config: {
            url: config.redisUrl,
            keyPrefix: config.redisKeyPrefix,
            maxRetriesPerRequest: 1,
            // Commands issued in the same tick share one write: under a stampede this turns
            // thousands of small socket writes into a few large ones.
            enableAutoPipelining: true,
            connectTimeout: 2000,
            commandTimeout: 2000,
            retryStrategy: (times: number) => Math.min(times * 100, 1000),
          },
        };
      },
    }),
  ],
  providers: [
    AdmissionChannel,
    {
      provide: REDIS,
      inject: [RedisService],
      useFactory: async (s: RedisService) => {
        const client = s.getOrThrow();
        await defineScripts(client);
        return client;
      },
    },
  ],
  exports: [REDIS, AdmissionChannel],
})
export class RedisModule {}
