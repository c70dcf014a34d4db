import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RedisServer } from '../helpers/redis-server';

// A small run of `npm run bench`, so the benchmark cannot rot. It asserts what the bench
// itself guarantees (it completes, every invariant holds, every figure is reported), never a
// speed: speed is read from the full run's ratios, not asserted in a test.
describe('npm run bench (smoke: 300 students, 30 seats)', () => {
  // A Redis of its own: the bench reads the server's command counts and CPU, and puts its
  // expiry-event setting back when done, which files running beside it must not feel.
  let redis: RedisServer;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    redis = await RedisServer.start();
    env = { ...process.env, BENCH_REDIS_URL: redis.url };
  });
  afterAll(() => redis.stop());

  it('completes with every invariant at 0 and every figure present', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'result.json');
    const run = spawnSync(
      process.execPath,
      [
        'bench/stampede.js',
        '--students',
        '300',
        '--seats',
        '30',
        '--no-build',
        '--mode', // an event mode and the cron, each with every kind of student
        'pubsub,cron',
        '--pgbench-seconds',
        '1',
        '--catalog-sections',
        '300',
        '--best-of', // one run of each kind: the smoke shows the figures, not the best of them
        '1',
        '--json',
        out,
      ],
      // 96–148 s here, with another test file beside it: a hung bench is killed well after that.
      { cwd: resolve(__dirname, '../..'), env, encoding: 'utf8', timeout: 420_000 },
    );
    expect({ status: run.status, stderr: run.stderr.slice(-2000) }).toEqual({
      status: 0,
      stderr: expect.any(String),
    });
    expect(run.stdout).toContain('| join rate (req/s) |');
    // The hot path: each rate against its floor, what a join costs Redis, where its time goes.
    // Their values are the full run's to show; here only that they are measured and printed.
    for (const row of [
      '| first joins/s |',
      '| status reads (GET …/queue)/s |',
      "| Redis commands per join, scripts' own calls included |",
      '| Redis CPU per join (µs, INFO cpu) |',
      '| part of a request | join (µs) | share | status read (µs) | share |',
      '| token check |',
      'Redis calls per first join, by command',
    ]) {
      expect(run.stdout).toContain(row);
    }
    const r = JSON.parse(readFileSync(out, 'utf8'));
    expect(r.ok).toBe(true);
    expect(r.stampede.invariants).toMatchObject({
      oversold: 0,
      doubleSeats: 0,
      outOfOrder: 0,
      rows: 30,
    });
    expect(r.stampede.outcomes.enrolled).toBe(30);
    // Students on the page, on live streams and polling, in every admission mode, all served.
    for (const kind of ['page', 'sse', 'poll']) {
      for (const mode of ['pubsub', 'cron']) {
        const x = r.clients[kind][mode];
        expect([kind, mode, x.outcomes.enrolled, x.invariants.oversold]).toEqual([
          kind,
          mode,
          30,
          0,
        ]);
      }
    }
    expect(r.openStreams.streams).toBe(300);
    expect(r.openStreams.updatesPerStreamPerSecond).toBeGreaterThan(0);
    // Every ticket handed on reached the next student's open stream.
    expect(r.openStreams.push.count).toBe(r.openStreams.push.asked);
    // Page students had their streams open before the opening: every admission granted
    // while they waited (in cron mode, all 30: the tick admits after the joins) was pushed to
    // an open stream.
    const page = r.clients.page.cron.timeline;
    expect(page.noticeMs.count).toBeGreaterThan(0);
    expect(page.pushMs.count).toBe(page.noticeMs.count);
    expect(r.stampede.join.ok).toBe(300);
    expect(r.hot.enrolled).toBe(300);
    // The term's rules, read against 4–5 held lectures each, refuse nobody here.
    expect(r.hotRules).toMatchObject({ holding: true, enrolled: 300, invariants: { oversold: 0 } });
    expect(run.stdout).toContain('students holding 4–5 lectures of the term');
    // The window and hold checks: the hot lecture in a term with windows, and without them.
    expect(r.hotWindows).toMatchObject({
      windows: true,
      enrolled: 300,
      invariants: { oversold: 0 },
    });
    expect(r.hotRecords).toMatchObject({
      records: true,
      enrolled: 300,
      invariants: { oversold: 0 },
    });
    expect(run.stdout).toContain('hot lecture in a term with 4 registration windows');
    expect(r.peer.oversold).toBe(0);
    // The catalog: every section imported in one request, then the same file unchanged.
    expect(r.catalog).toMatchObject({ sections: 300, created: 300, lectures: 300, unchanged: 300 }); // prettier-ignore
    expect(run.stdout).toContain('| the same file again (s) |');
    expect(r.hotPath).toMatchObject({ requests: 1200, joins: { ok: 1200 }, reads: { ok: 1200 } });
    for (const ratio of [r.ratios.hotJoinsVsFloor, r.ratios.hotReadsVsFloor]) {
      expect(ratio).toBeGreaterThan(0);
    }
    expect(r.hotPath.joins.redisCommands).toBeGreaterThan(0);
    // First joins and status reads on a lecture of a term with windows, records and holds.
    expect(r.hotPath).toMatchObject({ windowJoins: { ok: 1200 }, windowReads: { ok: 1200 } });
    expect(r.ratios.windowJoinsVsPlain).toBeGreaterThan(0);
    expect(run.stdout).toContain('the same, lecture of a term with 4 registration windows');
    // A term's morning: plans joined all at once, one stream each, every rule and seat held.
    expect(r.term).toMatchObject({ students: 300, streamsPerStudent: 1, streams: { refused: 0 } });
    expect(Object.values(r.term.invariants)).toEqual(Array(8).fill(0));
    expect(r.term.seatsTaken).toBeGreaterThan(0);
    expect(run.stdout).toContain("| students' opening to final timetable p50 / p99 (s) |");
    expect(run.stdout).toContain('| Join all: plans/s, joins/s, p50 / p99 (ms) |');
    expect(r.term.peakRequests.perSecond).toBeGreaterThan(0);
    // The same morning with Join all auto-enrolling: nobody clicks, everyone settles, every
    // invariant holds (10 included: the timetable ones), each seat's grant found in the log.
    expect(r.termAuto).toMatchObject({ students: 300, streams: { refused: 0 }, unsettled: {} });
    expect(r.termAuto.finalSeconds.settled).toBe(300);
    expect(Object.values(r.termAuto.invariants)).toEqual(Array(7).fill(0));
    expect(r.termAuto.grantToSeat.n).toBeGreaterThan(0);
    expect(run.stdout).toContain('| grant → seat committed p50 / p99 (ms) |');
    // The same morning in four windows by cohort: each window's figures, the peak request rate
    // against the one-window morning's, invariants 1–3 and 5–9 (9: registered only in a window).
    expect(r.termWindows).toMatchObject({ students: 300, streams: { refused: 0 } });
    expect(Object.values(r.termWindows.invariants)).toEqual(Array(8).fill(0));
    expect(r.termWindows.records.created).toBe(300);
    expect(r.termWindows.windows.map((w: { name: string }) => w.name)).toEqual(['y4', 'y3', 'y2', 'y1']); // prettier-ignore
    for (const w of r.termWindows.windows) {
      expect([w.name, w.students, typeof w.finalSeconds.p99, typeof w.peakRequests.perSecond]).toEqual([w.name, 75, 'number', 'number']); // prettier-ignore
    }
    expect(r.termWindows.windows[0].seatsTaken).toBeGreaterThan(0);
    expect(r.ratios.windowPeakVsOneWindow).toBeGreaterThan(0);
    for (const row of [
      '| window (cohort) | students | seats taken | opening → last seat of the cohort (s) |',
      '| y1 (year 1) |',
      '| peak request rate from the first opening: the busiest 1 s (requests/s, as sent) |',
    ]) {
      expect(run.stdout).toContain(row);
    }
    for (const v of [
      r.stampede.join.rate,
      r.floor.rate,
      r.hot.rate,
      r.hotRules.rate,
      r.stampede.fillSeconds,
      r.stampede.rssMb,
    ]) {
      expect(v).toBeGreaterThan(0);
    }
  }, 450_000);

  it('--prequeue: an opening with everyone pre-queued, drawn and admitted, every figure present', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'result.json');
    const run = spawnSync(
      process.execPath,
      ['bench/stampede.js', '--prequeue', '--prequeue-sizes', '300', '--seats', '30', '--no-build', '--mode', 'pubsub', '--json', out],
      { cwd: resolve(__dirname, '../..'), env, encoding: 'utf8', timeout: 200_000 },
    ); // prettier-ignore
    expect({ status: run.status, stderr: run.stderr.slice(-2000) }).toEqual({
      status: 0,
      stderr: expect.any(String),
    });
    expect(run.stdout).toContain('| pre-queued |');
    const [r] = JSON.parse(readFileSync(out, 'utf8')).prequeue;
    expect(r).toMatchObject({
      size: 300,
      preQueued: 300,
      drawnCount: 300,
      refused: 0,
      firstVia: 'draw',
    });
    for (const v of [r.joinRate, r.drawCallMs, r.storedAfterMs, r.rssMb])
      expect(v).toBeGreaterThan(0);
    expect(r.firstAdmissionAfterMs).toBeGreaterThanOrEqual(0);
  }, 230_000);
});
