import type { Result } from 'ioredis';

/**
 * Error replies of the scripts (small negative integers, as in bullmq), named in one place.
 * A script that fails returns `{ code }` (a table of one) or `code`.
 */
export enum ScriptError {
  /**
   * join, admit: the lecture's facts are missing or incomplete in Redis (rebuild them from
   * PostgreSQL); consume: the student holds no live ticket.
   */
  Missing = -1,
}

/** True when a table-returning script answered with an error code instead of its table. */
export function isScriptError<T extends unknown[]>(
  reply: T | [ScriptError],
): reply is [ScriptError] {
  return reply.length === 1;
}

/** join-18.lua: { state, detail, waiting, seatsLeft, created, room, seq, drew, opened, auto, refusal } */
export type JoinReply = [string, number, number, number, number, number, number, number, number, number, string]; // prettier-ignore
/** admit-19.lua: { admitted, waiting, expired, lapsed, idle, students, expiresAt, drew, autos, paced, needs } */
export type AdmitReply = [number, number, number, number, number, string[], number, number, number, number, string[]]; // prettier-ignore
/** places-9.lua: { waiting, seatsLeft, rate, opened, ...state, detail, seq per student } */
export type PlacesReply = [number, number, string, number, ...(string | number)[]];
/** positions-3.lua: { head, waiting, rate, ...gone runs as first, last pairs } */
export type PositionsReply = [number, number, string, ...number[]];
type Key = string;
type Arg = string | number;
type Key10 = [Key, Key, Key, Key, Key, Key, Key, Key, Key, Key];

// Types of the commands lua-scripts.ts defines from lua/<name>-<keys>.lua: KEYS first, then
// ARGV, exactly as each script's header says. Only the stores call them.
declare module 'ioredis' {
  interface RedisCommander<Context> {
    join(
      ...keysAndArgs: [...Key10, Key, Key, Key, Key, Key, Key, Key, Key, ...Arg[]]
    ): Result<JoinReply | [ScriptError.Missing], Context>;
    observedRate(key: Key): Result<string, Context>;
    admit(
      ...keysAndArgs: [
        ...Key10,
        Key,
        Key,
        Key,
        Key,
        Key,
        Key,
        Key,
        Key,
        Key,
        Arg,
        Arg,
        Arg,
        ...Arg[],
      ]
    ): Result<AdmitReply | [ScriptError.Missing], Context>;
    leave(...keysAndArgs: [...Key10, Arg, Arg]): Result<[number, number], Context>;
    drawWindows(...keys: [...Key10, Key, Key]): Result<(number | string)[], Context>;
    moveWindows(key: Key, ...windowsAndOpenings: Arg[]): Result<number, Context>;
    positions(...keysAndArgs: [Key, Key, Key]): Result<PositionsReply, Context>;
    places(
      ...keysAndArgs: [Key, Key, Key, Key, Key, Key, Key, Key, Key, ...Arg[]]
    ): Result<PlacesReply | [ScriptError.Missing], Context>;
    consume(
      ...keysAndArgs: [Key, Key, Key, Key, Key, Arg, Arg]
    ): Result<[number, number, number] | ScriptError.Missing, Context>;
    giveBack(...keysAndArgs: [Key, Key, Key, Key, Arg, Arg, Arg]): Result<number, Context>;
    regrant(...keysAndArgs: [Key, Key, Key, Arg, Arg, Arg]): Result<number, Context>;
    lapsed(key: Key): Result<string[], Context>;
    endHolds(key: Key, ...studentsAndDeadlines: Arg[]): Result<number, Context>;
    recordLecture(...keysAndArgs: [Key, Key, ...Arg[]]): Result<number, Context>;
    rebuildLecture(...keysAndArgs: [Key, Key, ...Arg[]]): Result<number, Context>;
    restoreOrder(...keysAndArgs: [Key, Key, Arg, Arg, Arg, Arg]): Result<number, Context>;
    putRecords(key: Key, ...args: Arg[]): Result<number, Context>;
    autoDue(...keysAndArgs: [Key, Key, Arg, Arg]): Result<string[], Context>;
    claims(key: Key, ...args: Arg[]): Result<unknown[] | number, Context>;
    giveUp(
      ...keysAndArgs: [Key, Key, Key, Key, Key, Key, Key, Key, Arg, Arg]
    ): Result<0 | 1 | 2, Context>;
  }
}
