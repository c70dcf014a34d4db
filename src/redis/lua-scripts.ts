import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RedisClient } from './redis-client';

// lua/ sits at the repository root: two levels up from src/redis, three from dist/src/redis.
const LUA_DIR = [resolve(__dirname, '../../lua'), resolve(__dirname, '../../../lua')].find((d) =>
  existsSync(d),
);

/** Script file name `<name>-<numberOfKeys>.lua`, as in bullmq. */
const SCRIPT_FILE = /^([a-z-]+)-(\d+)\.lua$/;
/** `--- @include "name"` pastes lua/includes/name.lua in its place (bullmq's convention). */
const INCLUDE = /^--- @include "([a-z-]+)"$/gm;

export interface ScriptSource {
  /** camelCase command name, e.g. give-back-4.lua -> giveBack */
  name: string;
  numberOfKeys: number;
  lua: string;
}

export function readScripts(dir = LUA_DIR): ScriptSource[] {
  if (!dir) throw new Error('the lua/ folder was not found next to the service');
  return readdirSync(dir)
    .map((file) => SCRIPT_FILE.exec(file))
    .filter((m): m is RegExpExecArray => m !== null)
    .map(([file, name, keys]) => ({
      name: name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()),
      numberOfKeys: Number(keys),
      lua: readFileSync(resolve(dir!, file), 'utf8').replace(INCLUDE, (_line, name: string) =>
        readFileSync(resolve(dir!, 'includes', `${name}.lua`), 'utf8'),
      ),
    }));
}

/**
 * Registers every script as an ioredis command (run by EVALSHA, falling back to EVAL once if
 * Redis lost its script cache) and loads them into Redis now, so the first request does not
 * pay for it.
 */
export async function defineScripts(redis: RedisClient): Promise<void> {
  const scripts = readScripts();
  for (const s of scripts) {
    redis.defineCommand(s.name, { numberOfKeys: s.numberOfKeys, lua: s.lua });
  }
  // If Redis is down at start-up the service still starts (answering 503 until it is back);
  // EVALSHA's fallback loads the scripts then.
  await Promise.all(scripts.map((s) => redis.script('LOAD', s.lua))).catch(() => undefined);
}
