// A term's registration morning in windows by cohort (API.md v4): the one-window morning's
// lectures, plans, pages and students (lib/morning.js), the students in `windows` cohorts of one
// year each (the first window's the highest year), their records imported in one request, and
// one window per cohort, never closing. Join all pre-queues every plan for the student's own
// window; the lectures open at the first window's opening, and each next window opens when the
// previous cohort has settled, by PUTting the windows again with its opening moved to a moment
// from now (a window keeps its seed, so its pre-queue stays and is drawn then).
const stores = require('../lib/stores');
const morning = require('../lib/morning');
const { cpuSeconds, machineCpuSeconds } = require('../lib/processes');
const { monotonicUs } = require('../lib/profile');
const { importRecords, putWindows } = require('../lib/registration');
const { DB_URL, REDIS_URL, STAMPEDE_TIMEOUT_MS, log } = require('../lib/run-config');

const { PLAN, LECTURES, LATER_MS } = morning;
/**
 * How far ahead of the moment it is set each opening is: time for one PUT of the windows (and,
 * at the first, the lectures' 40 PATCHes) to land; nothing is measured before an opening.
 */
const LEAD_MS = 500;
const MINUTE = 60_000;

let runs = 0;

/**
 * Where the CPU went so far: the service's, Redis's, the machine's (s); and the status frames
 * the students' streams received; at a wall-clock ms.
 */
async function cpuNow(api, m, cohorts) {
  const redis = await stores.redisCpuSeconds(REDIS_URL);
  const service = cpuSeconds(api.servicePid);
  const byCohort = cohorts.map((c) => c.students.reduce((n, s) => n + s.frames, 0));
  return { at: Date.now(), service, redis, machine: machineCpuSeconds(), frames: m.run.frames, byCohort }; // prettier-ignore
}

/**
 * Between two samples: each one's share of a core, the machine's busy share of all cores, and
 * status frames received per second, by all and by the cohorts after `c` (whose windows are
 * still to open).
 */
function cpuShare(a, b, c) {
  const wall = (b.at - a.at) / 1000;
  const later = (x) => x.byCohort.slice(c + 1).reduce((n, k) => n + k, 0);
  return {
    laterCohortsFramesPerSecond: (later(b) - later(a)) / wall,
    service: a.service === null || b.service === null ? null : (b.service - a.service) / wall,
    redis: (b.redis - a.redis) / wall,
    machineBusy: (b.machine.busy - a.machine.busy) / (b.machine.all - a.machine.all),
    framesPerSecond: (b.frames - a.frames) / wall,
  };
}

/**
 * The term's windows: those of cohorts before `upTo` at the openings they had, cohort `upTo`'s
 * at `at`, the later ones still a minute apart after the lectures' first planned opening
 * (inside the 120 pre-queue minutes, so that Join all pre-queues every cohort).
 */
function windowsAt(cohorts, openings, upTo, at) {
  return cohorts.map((c, k) => ({
    name: c.name,
    opensAt: new Date(k < upTo ? openings[k] : k === upTo ? at : c.plannedAt).toISOString(),
    match: { years: [c.year] },
  }));
}

async function termWindows(api, admin, { students: n, windows: w }) {
  const term = `windows-${process.pid}-${++runs}`;
  const planned = Date.now() + LATER_MS;
  const m = await morning.setUpMorning(api, admin, { term, n, prefix: 'tw', opensAt: planned });
  // Cohort c (of year w - c) is every w-th student: a quarter each with four windows.
  const cohorts = Array.from({ length: w }, (_, c) => ({
    name: `y${w - c}`,
    year: w - c,
    plannedAt: planned + c * MINUTE,
    students: m.students.filter((_, i) => i % w === c),
  }));
  log(`term in ${w} windows: ${n} students' records imported in one request`);
  const records = await importRecords(api, admin, term, m.students.map((s, i) => ({ studentId: s.id, year: w - (i % w) }))); // prettier-ignore
  await putWindows(api, admin, term, windowsAt(cohorts, [], -1, null));
  log(`term in ${w} windows: ${n} students plan ${PLAN} of ${LECTURES} lectures (${m.seats} seats each)`); // prettier-ignore
  const opened = await morning.planAndOpenPages(api, m);
  // Join all, before any window opens: each cohort pre-queued for its own window's draw (the
  // first cohort's opening is the lectures' own, so theirs is the lectures' own draw).
  const joinAll = await morning.joinAllPreQueued(api, m);

  const openings = [];
  const cpu = [];
  for (const [c, cohort] of cohorts.entries()) {
    cpu.push(await cpuNow(api, m, cohorts));
    const at = Date.now() + LEAD_MS;
    for (const s of cohort.students) s.opensAt = at;
    // The window first, then the lectures: the first cohort's opening is the lectures' all along.
    await putWindows(api, admin, term, windowsAt(cohorts, openings, c, at));
    if (c === 0) await morning.openLectures(api, admin, m, at);
    openings.push(at);
    log(`term in ${w} windows: window ${cohort.name} opens`);
    await morning.untilSettled(cohort.students, at + STAMPEDE_TIMEOUT_MS);
  }
  cpu.push(await cpuNow(api, m, cohorts));
  const endedAt = Date.now();
  const end = await morning.closePages(api, admin, m);
  const pg = await stores.termFigures(DB_URL, term, openings[0]);
  const byYear = await stores.seatsByYear(DB_URL, term);
  return {
    ...morning.outcomes(m, end, pg),
    records,
    streams: opened,
    joinAll,
    peakRequests: api.sent.peak(openings[0], endedAt + 1),
    windows: cohorts.map((cohort, c) => {
      const seats = byYear[cohort.year] ?? { rows: 0, lastMs: null };
      const firstTicket = Math.min(...cohort.students.map((s) => s.firstTicketAt ?? Infinity));
      return {
        name: cohort.name,
        year: cohort.year,
        students: cohort.students.length,
        opensAt: openings[c],
        // The same moment on the monotonic clock a service's --cpu-prof stamps (lib/profile.js).
        opensAtMonotonicUs: monotonicUs() - (Date.now() - openings[c]) * 1000,
        // From this window's PUT to the next's: CPU as shares of one core; the machine's of all.
        cpu: cpuShare(cpu[c], cpu[c + 1], c),
        seatsTaken: seats.rows,
        lastSeatSeconds: seats.lastMs === null ? null : (seats.lastMs - openings[c]) / 1000,
        firstTicketMs: Number.isFinite(firstTicket) ? firstTicket - openings[c] : null,
        finalSeconds: morning.finalSeconds(cohort.students),
        ticketsBack: cohort.students.reduce((k, s) => k + s.ticketsBack, 0),
        peakRequests: api.sent.peak(openings[c], openings[c + 1] ?? endedAt + 1),
      };
    }),
  };
}

module.exports = { termWindows };
