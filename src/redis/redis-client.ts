import type { Cluster, Redis } from 'ioredis';

/**
 * The shared command connection: one standalone Redis (REDIS_URL) or a Redis Cluster
 * (REDIS_CLUSTER_NODES). Everything the service sends works on both: every multi-key command
 * and script stays within one lecture's hash tag, so within one cluster slot.
 */
export type RedisClient = Redis | Cluster;
