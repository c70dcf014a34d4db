import calculateSlot from 'cluster-key-slot';
import { readScripts } from '../../src/redis/lua-scripts';
import { lectureKeys } from '../../src/redis/keys';

describe('Every script touches one cluster slot', () => {
  // The standalone server here answers CLUSTER KEYSLOT only with cluster support enabled, so
  // the slot comes from the CRC16 function ioredis's Cluster client routes commands with.
  it('all keys of a lecture hash to the same slot, and different lectures spread out', async () => {
    for (const id of [1, 42, 2147483647]) {
      const k = lectureKeys(id);
      const names = [k.queue, k.seq, k.ticketPrefix, k.ticket('alice'), k.ticket('x:y@z'), k.tickets, k.inflight,
        k.enrolled, k.facts, k.stats, k.admitLog, k.gone, k.prequeue, k.drawn, k.draw, k.grants,
        k.admissions, k.wpre, k.wqueue, k.wopen, k.wdraws, k.wdrawn, k.wruns, k.waitlisted]; // prettier-ignore
      const slots = new Set<number>();
      for (const name of names) slots.add(calculateSlot(name));
      expect(slots.size).toBe(1);
    }
    expect(calculateSlot(lectureKeys(1).queue)).not.toBe(calculateSlot(lectureKeys(2).queue));
  });

  it('scripts build no key from ARGV and call no key outside KEYS', () => {
    for (const s of readScripts()) {
      // Every redis.call's key argument is KEYS[n] (or KEYS[n] .. student for ticket keys), or
      // KEYS[i] where i is an index an included function was given (includes/draw.lua), or
      // KEYS[K.name] of a table of such indexes (includes/window-draw.lua).
      const calls = s.lua.match(/rcall\('[A-Z]+', [^,)]+/g) ?? [];
      expect(calls.length).toBeGreaterThan(0);
      for (const c of calls) {
        const keyArg = c.split(', ')[1];
        expect({ script: s.name, keyArg: /^KEYS\[(\d+|[a-z]+|K\.[a-z]+)\]/.test(keyArg) }).toEqual({
          script: s.name,
          keyArg: true,
        });
      }
      expect(s.lua).toMatch(/KEYS\[1\]/);
    }
  });
});
