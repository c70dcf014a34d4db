import type { Result } from 'ioredis';

/** join-8.lua: { state, detail, waiting, seatsLeft, created, rate, room } or { 'NO_FACTS' }. */
export type JoinReply = [string, number, number, number, number, string, number] | ['NO_FACTS'];

// Types of the commands lua-scripts.ts defines from lua/<name>-<keys>.lua: KEYS first, then
// ARGV, exactly as each script's header says. Only the stores call them.
declare module 'ioredis' {
  interface RedisCommander<Context> {
    join(...keysAndArgs: string[]): Result<JoinReply, Context>;
    admit(
      ...keysAndArgs: (string | number)[]
    ): Result<[number, number, number] | [number], Context>;
    leave(...keysAndArgs: string[]): Result<[number, number], Context>;
    consume(...keysAndArgs: (string | number)[]): Result<number, Context>;
    giveBack(...keysAndArgs: (string | number)[]): Result<number, Context>;
    recordSeats(...keysAndArgs: (string | number)[]): Result<number, Context>;
    syncFacts(...keysAndArgs: (string | number)[]): Result<number, Context>;
  }
}
