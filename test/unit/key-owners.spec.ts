import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { KEY_OWNERS, SCRIPT_READS } from '../../src/redis/keys';
import { readScripts } from '../../src/redis/lua-scripts';

const SRC = resolve(__dirname, '../../src');

function sources(dir = SRC): { file: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts')
      ? [{ file: relative(SRC, path), text: readFileSync(path, 'utf8') }]
      : [];
  });
}

/** The key families a file names: `k.queue`, `lectureKeys(id).facts`, `k.ticket(s)`, the sets. */
function familiesNamedIn(text: string): Set<string> {
  const named = new Set<string>();
  for (const m of text.matchAll(/\b(?:k|lectureKeys\([^()]*\))\.([a-zA-Z]+)\b/g)) {
    named.add(m[1] === 'ticket' ? 'ticketPrefix' : m[1]);
  }
  if (/\bWAITING_LECTURES_KEY\b/.test(text)) named.add('waitingLectures');
  if (/\bLOGGED_LECTURES_KEY\b/.test(text)) named.add('loggedLectures');
  if (/\bWINDOW_DRAWS_KEY\b/.test(text)) named.add('windowDraws');
  if (/\bstudentLinesKey\b/.test(text)) named.add('studentLines');
  if (/\bstudentAutoKey\b/.test(text)) named.add('studentAuto');
  if (/\bstudentClaimsKey\b/.test(text)) named.add('studentClaims');
  if (/\btermRecordsKey\b/.test(text)) named.add('termRecords');
  if (/\bnotificationSentKey\b/.test(text)) named.add('notificationSent');
  return named;
}

/**
 * The README and src/redis/keys.ts say each piece of Redis state has one writer, named beside
 * its key. This holds them to it: only the owning file names a key family at all, so every
 * write of it is in that file.
 */
describe('One owner per Redis key family (src/redis/keys.ts, KEY_OWNERS)', () => {
  const files = sources().filter((f) => f.file !== join('redis', 'keys.ts'));
  const owners = new Set(Object.values(KEY_OWNERS).flat());

  it('every family is named in exactly the files KEY_OWNERS gives it', () => {
    const found: Record<string, string[]> = {};
    for (const { file, text } of files) {
      for (const family of familiesNamedIn(text)) {
        if (!SCRIPT_READS[file]?.includes(family as never)) (found[family] ??= []).push(file);
      }
    }
    for (const list of Object.values(found)) list.sort();
    const declared = Object.fromEntries(
      Object.entries(KEY_OWNERS).map(([family, list]) => [family, [...list].sort()]),
    );
    expect(found).toEqual(declared);
  });

  it('no file but the owners builds a lecture key or names the shared sets', () => {
    const users = files
      .filter(({ text }) =>
        /\b(lectureKeys|WAITING_LECTURES_KEY|LOGGED_LECTURES_KEY|studentLinesKey|studentAutoKey|studentClaimsKey|termRecordsKey|WINDOW_DRAWS_KEY|notificationSentKey)\b/.test(
          text,
        ),
      )
      .map((f) => f.file)
      .sort();
    expect(users).toEqual([...owners].sort());
  });

  it('every script is called from one file, a store that owns what it writes', () => {
    for (const { name } of readScripts()) {
      const callers = files.filter((f) => new RegExp(`\\.redis\\.${name}\\(`).test(f.text));
      expect([name, callers.length]).toEqual([name, 1]);
      expect([name, owners.has(callers[0].file)]).toEqual([name, true]);
    }
  });

  it("what a store's scripts only read, they never write", () => {
    const writes =
      /rcall\('(SET|HSET|HDEL|HINCRBY|SADD|SREM|DEL|ZADD|ZREM|ZPOPMIN|ZREMRANGEBYSCORE|ZREMRANGEBYLEX|INCR|INCRBY|RENAME|XADD)'/;
    for (const [file, families] of Object.entries(SCRIPT_READS)) {
      const text = files.find((f) => f.file === file)!.text;
      for (const script of readScripts().filter((s) => text.includes(`.redis.${s.name}(`))) {
        for (const family of families) {
          const index = new RegExp(`KEYS\\[(\\d+)\\]\\s+${family}\\b`).exec(script.lua)?.[1];
          if (!index) continue; // the script does not take that key
          const written = script.lua
            .split('\n')
            .filter((line) => writes.test(line) && line.includes(`KEYS[${index}]`));
          expect([script.name, family, written]).toEqual([script.name, family, []]);
        }
      }
    }
  });

  it('Redis is injected only into the owners and the plumbing that holds no state of ours', () => {
    const plumbing = [
      'health/redis.health.ts', // PING, CLUSTER INFO
      'news/admission-channel.ts', // Pub/Sub and the keyspace-events setting: no keys
      'ratelimit/rate-limit.guard.ts', // rate-limiter-flexible's own keys, one per student
    ];
    const injecting = files
      .filter(({ text }) => /@InjectRedis\(\)/.test(text))
      .map((f) => f.file)
      .sort();
    expect(injecting).toEqual([...owners, ...plumbing].sort());
  });
});
