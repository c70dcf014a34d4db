import type { AppConfig } from '../../src/config/app-config';
import { NO_AUTO_LIMIT } from '../../src/line/line.store';
import { AutoEnrollRoom, LATE_AFTER_MS } from '../../src/queue/auto-enroll-room';

const roomOf = (autoEnrollInFlight: number) =>
  new AutoEnrollRoom({ autoEnrollInFlight } as AppConfig);
const turn = () => new Promise((r) => setImmediate(r));
/** Grants `n` on lecture 0 and finishes them: the room grows by n. */
const grow = (room: AutoEnrollRoom, n: number) => {
  room.settle(0, room.lend(n), n, false);
  room.done(n);
};

describe('AutoEnrollRoom (tickets of auto-enrolling students one instance holds)', () => {
  afterEach(() => jest.restoreAllMocks());

  it('starts at an eighth of the limit and grows by each enroll that finishes, up to the limit', () => {
    const room = roomOf(16); // pieces of 2
    expect(room.lend(10)).toBe(2);
    expect(room.lend(10)).toBe(0); // lent already: calls running together never share it
    room.settle(1, 2, 2, false);
    expect(room.holding).toBe(2);
    room.done(2);
    expect(room.lend(10)).toBe(4);
    room.settle(1, 4, 4, false);
    room.done(4);
    grow(room, 8);
    grow(room, 16);
    expect(room.lend(100)).toBe(16); // the limit, however much more finished
  });

  it('lends each admission call at most what is left; what a call did not grant comes back', () => {
    const room = roomOf(80); // grown to its limit below
    grow(room, 10);
    grow(room, 20);
    grow(room, 40);
    expect(room.lend(60)).toBe(60);
    expect(room.lend(60)).toBe(20);
    room.settle(1, 60, 60, false);
    room.settle(2, 20, 5, false);
    expect(room.holding).toBe(65);
    expect(room.lend(50)).toBe(15);
  });

  it('after two quiet seconds it starts at a piece again', () => {
    const room = roomOf(16);
    grow(room, 2);
    grow(room, 4);
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + 1_000);
    expect(room.lend(100)).toBe(8);
    room.settle(0, 8, 0, false);
    jest.spyOn(Date, 'now').mockReturnValue(now + 3_500);
    expect(room.lend(100)).toBe(2);
  });

  it('0 is no limit: every call may grant any number, and nothing is counted', () => {
    const room = roomOf(0);
    expect(room.lend(500)).toBe(NO_AUTO_LIMIT);
    room.settle(1, NO_AUTO_LIMIT, 500, false);
    expect(room.holding).toBe(0);
  });

  it('admits a lecture that stopped for room again once enrolls finish, once per turn however many finish', async () => {
    const room = roomOf(16);
    grow(room, 2); // room 4, pieces of 2
    const resumed: number[] = [];
    room.onRoom((id) => resumed.push(id));
    room.settle(7, room.lend(5), 4, true);
    room.settle(8, room.lend(5), 0, true);
    await turn();
    expect(resumed).toEqual([]); // still full
    room.done(4);
    await turn();
    expect(resumed).toEqual([7, 8]);
    expect(room.holding).toBe(0);
    room.done(); // nothing counted is left: no room below zero, nobody to resume
    await turn();
    expect(resumed).toEqual([7, 8]);
  });

  it('a call that granted less than it was lent frees the rest for a lecture waiting', async () => {
    const room = roomOf(24); // pieces of 3
    const resumed: number[] = [];
    room.onRoom((id) => resumed.push(id));
    const first = room.lend(3);
    room.settle(4, room.lend(3), 0, true); // nothing left for it: it stopped
    room.settle(5, first, 0, false);
    await turn();
    expect(resumed).toEqual([4]);
  });

  it('hands room on in pieces, one waiting lecture per piece, the first to stop first', async () => {
    const room = roomOf(16); // pieces of 2
    for (const n of [2, 4, 8]) grow(room, n); // grown to 16
    const resumed: number[] = [];
    room.onRoom((id) => resumed.push(id));
    room.settle(1, room.lend(16), 16, true);
    for (const id of [2, 3]) room.settle(id, room.lend(16), 0, true);
    room.done();
    await turn();
    expect(resumed).toEqual([]); // one free: less than a piece while enrolls still run
    room.done();
    await turn();
    expect(resumed).toEqual([1]); // a piece: one lecture
    room.done(14);
    await turn();
    expect(resumed).toEqual([1, 2, 3]); // nothing in flight: every one left
  });

  it('shrinks when enrolls waited longer than LATE_AFTER_MS — by a quarter to a half, as late as they were — once for the tickets granted before a shrink, never below a piece; then grows a piece per room', () => {
    const room = roomOf(800); // pieces of 100
    for (const n of [100, 200, 400]) grow(room, n); // slow start up to the limit
    expect(room.lend(10_000)).toBe(800);
    room.settle(1, 800, 800, false);
    // The clock is held: a slow machine between the calls below must not spread them apart.
    const now = Date.now();
    const at = (ms: number) => jest.spyOn(Date, 'now').mockReturnValue(now + ms);
    at(0);
    const grantedAt = now - LATE_AFTER_MS - 100; // seated 0.6 s after the grant: a little late
    room.done(400, grantedAt);
    room.done(400, grantedAt); // the same moment's other late enrolls: one signal, not two
    expect(room.lend(10_000)).toBe(600); // a quarter off (500 / 600 of it would be less)
    room.settle(1, 600, 600, false);
    // Later, tickets granted before that shrink come back late too: it has answered them.
    at(300);
    room.done(300, grantedAt);
    expect(room.lend(10_000)).toBe(300); // 600 in all, 300 of them in flight
    room.settle(1, 300, 300, false);
    // Tickets granted after it, and seated 1.2 s later: 500 / 1200 of the room, but half at most.
    at(1300);
    room.done(600, now + 100);
    expect(room.lend(10_000)).toBe(300);
    room.settle(1, 300, 300, false);
    // On time now: no longer doubling, a piece for each room's worth that finishes.
    room.done(300, now + 1300);
    expect(room.lend(10_000)).toBe(400);
    room.settle(1, 400, 0, false);
    // However late, never below a piece (each ticket granted after the shrink before it).
    for (let i = 1; i <= 20; i++) {
      at(1300 + i * 1000);
      room.settle(1, room.lend(10_000), 1, false);
      room.done(1, now + 1300 + i * 1000 - 600);
    }
    expect(room.lend(10_000)).toBe(100);
  });

  it('without the grant time (a fault, settings gone) it frees the room and grows as before', () => {
    const room = roomOf(16);
    room.settle(1, room.lend(10), 2, false);
    room.done(2);
    expect(room.lend(10)).toBe(4);
  });
});
