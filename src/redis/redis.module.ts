import { RedisModule as NestRedisModule, RedisService } from '@liaoliaots/nestjs-redis';
import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { defineScripts } from './lua-scripts';
import { STARTUP_WAIT_MS, readyWithin } from './ready';
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
            // On close, a socket that never connected (Redis down) is destroyed after this
            // instead of ioredis's 2 s, which kept a closed app's process alive that long.
            disconnectTimeout: 200,
            // While Redis is unreachable a command fails at once (503) instead of waiting in
            // a queue for a connection that may never come back.
            enableOfflineQueue: false,
          },
        };
      },
    }),
  ],
  providers: [
    {
      provide: REDIS,
      inject: [RedisService],
      useFactory: async (s: RedisService) => {
        const client = s.getOrThrow();
        // Without an offline queue, commands need the connection: give it a moment at start-up.
        // If Redis is not there, the service still starts and answers 503 until it is.
        await readyWithin(client, STARTUP_WAIT_MS);
        await defineScripts(client);
        return client;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule {}
