import {
  ClusterModule,
  ClusterService,
  RedisModule as NestRedisModule,
  RedisService,
} from '@liaoliaots/nestjs-redis';
import { DynamicModule, Global, Module } from '@nestjs/common';
import type { RedisOptions } from 'ioredis';
import type { AppConfig } from '../config/app-config';
import { defineScripts } from './lua-scripts';
import { STARTUP_WAIT_MS, readyWithin } from './ready';
import { connectionName, reconnectDelay } from './reconnect';
import { SLOTS_REFRESH_MS, refreshSlotsEvery } from './slot-refresher';
import type { RedisClient } from './redis-client';
import { REDIS } from './redis.token';
import './script-commands';

/**
 * What every connection to a Redis server uses. Commands fail fast when Redis is down (one
 * retry, short time-outs) so that a request answers 503 instead of waiting for a reconnect.
 */
const SERVER_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  commandTimeout: 2000,
  retryStrategy: reconnectDelay,
  // On close, a socket that never connected (Redis down) is destroyed after this instead of
  // ioredis's 2 s, which kept a closed app's process alive that long.
  disconnectTimeout: 200,
  // While Redis is unreachable a command fails at once (503) instead of waiting in a queue for
  // a connection that may never come back.
  enableOfflineQueue: false,
};

/**
 * The shared command connection: one standalone Redis (REDIS_URL), or a Redis Cluster
 * (REDIS_CLUSTER_NODES) followed through MOVED/ASK and topology changes, every command sent to
 * the master that owns its slot (reads included: a replica may lag behind a grant).
 */
@Global()
@Module({})
export class RedisModule {
  static forRoot(config: AppConfig): DynamicModule {
    const cluster = config.redisClusterNodes.length > 0;
    const named = connectionName(config.redisKeyPrefix, 'commands');
    const client = cluster
      ? ClusterModule.forRoot({
          closeClient: true,
          errorLog: false,
          config: {
            nodes: config.redisClusterNodes,
            keyPrefix: config.redisKeyPrefix,
            // No auto-pipelining on a cluster: ioredis follows MOVED and ASK per command, but an
            // auto-pipeline (grouped by node) retries only when every command in it was
            // redirected, so a redirection among others reached callers as a 503 (13 in 80,000
            // reads on a healthy cluster, and every moved slot's commands while resharding).
            enableAutoPipelining: false,
            enableOfflineQueue: false,
            scaleReads: 'master',
            // A failover takes a few seconds; meanwhile commands answer 503 (see infra-errors).
            clusterRetryStrategy: reconnectDelay,
            retryDelayOnFailover: 100,
            retryDelayOnClusterDown: 100,
            redisOptions: { ...SERVER_OPTIONS, connectionName: named },
            // Failures reach callers as failed commands (503); the client's own error events
            // would only repeat them.
            onClientCreated: (client) => {
              client.on('error', () => undefined);
              refreshSlotsEvery(client, SLOTS_REFRESH_MS); // follows failovers (slot-refresher.ts)
            },
          },
        })
      : NestRedisModule.forRoot({
          closeClient: true,
          errorLog: false,
          config: {
            url: config.redisUrl,
            keyPrefix: config.redisKeyPrefix,
            // Commands issued in the same tick share one write: under a stampede this turns
            // thousands of small socket writes into a few large ones.
            enableAutoPipelining: true,
            ...SERVER_OPTIONS,
            connectionName: named,
          },
        });
    return {
      module: RedisModule,
      imports: [client],
      providers: [
        {
          provide: REDIS,
          inject: [cluster ? ClusterService : RedisService],
          useFactory: async (s: RedisService | ClusterService) => {
            const redis: RedisClient = s.getOrThrow();
            // Without an offline queue, commands need the connection: give it a moment at
            // start-up. If Redis is not there, the service still starts and answers 503.
            await readyWithin(redis, STARTUP_WAIT_MS);
            await defineScripts(redis);
            return redis;
          },
        },
      ],
      exports: [REDIS],
    };
  }
}
