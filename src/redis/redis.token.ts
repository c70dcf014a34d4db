import { Inject } from '@nestjs/common';

/** Token of the shared ioredis command connection. */
export const REDIS = Symbol('REDIS');
export const InjectRedis = () => Inject(REDIS);
