// A term's registration morning: every student has planned five lectures of one term, has the
// page open (its one term stream) before opening, pre-queued them all with one Join all, and
// at opensAt acts as the page makes it: Enroll each ticket as it comes, Swap when a conflict
// appears and the new lecture is preferred, give up what can no longer be used (lib/morning.js).
const { now, sleep, inTurns } = require('../lib/load');
const stores = require('../lib/stores');
const { memoryAt } = require('../lib/service-memory');
const { createLecture } = require('../lib/lectures');
const morning = require('../lib/morning');
const { cpuSeconds, commandCpuSeconds, machineCpuSeconds } = require('../lib/processes');
const { REDIS_URL, DB_URL, STAMPEDE_TIMEOUT_MS, OPENING_IN_MS, log } = require('../lib/run-config');

const { PLAN, LECTURES, CALLS_AT_ONCE, LATER_MS } = morning;

let mornings = 0;

/** Memory once the service has given memory back since `before` (or `restMs` after `from`). */
async function memoryAtRest(api, before, from, restMs) {
  for (;;) {
    const m = await memoryAt(api);
    const seconds = (Date.now() - from) / 1000;
    // The collections since `before`, and their pauses: a morning's own are not these.
    const gaveBack = m.reclaims - (before.reclaims ?? 0);
    const pauseMs = (m.reclaimSeconds - (before.reclaimSeconds ?? 0)) * 1000;
    if (gaveBack > 0 || seconds * 1000 >= restMs) return { ...m, seconds, gaveBack, pauseMs };
    await sleep(1000);
  }
}

/**
 * What Join all costs against the separate joins it replaces: half the students join five
 * lectures with five POST …/queue each, the other half with one Join all each, the same number
 * of requests in flight. Lectures of a term of their own, pre-queued as on the morning.
 */
async function joinAllCost(api, admin, students) {
  const term = `join-cost-${process.pid}-${mornings}`;
  const opensAt = new Date(Date.now() + LATER_MS).toISOString();
  const ids = [];
  for (let i = 0; i < PLAN; i++) {
    ids.push((await createLecture(api, admin, { term, capacity: 10, opensAt, admission: { preQueueMinutes: 120 } })).id); // prettier-ignore
  }
  const half = Math.floor(students.length / 2);
  const measure = async (who, send) => {
    const [c0, u0] = await stores.redisCost(REDIS_URL);
    const t0 = now();
    await inTurns(who, CALLS_AT_ONCE, send);
    const seconds = (now() - t0) / 1000;
    const [c1, u1] = await stores.redisCost(REDIS_URL);
    const joins = who.length * PLAN;
    return {
      joinsPerSecond: joins / seconds,
      redisCommandsPerJoin: (c1 - c0) / joins,
      redisUsecPerJoin: (u1 - u0) / joins,
    };
  };
  for (const s of students.slice(half)) {
    const res = await api.request('PUT', `/me/terms/${term}/plan`, s.token, { body: { lectureIds: ids } }); // prettier-ignore
    if (res.status !== 200) throw new Error(`plan: ${res.status}`);
  }
  const separate = await measure(students.slice(0, half), (s) =>
    Promise.all(ids.map((id) => api.request('POST', `/lectures/${id}/queue`, s.token))),
  );
  const together = await measure(students.slice(half), (s) =>
    api.request('POST', `/me/terms/${term}/plan/queue`, s.token),
  );
  return { separate, together };
}

/** The clearance's verdicts so far (the service's /metrics): `<verdict> by <whom>` → count. */
async function clearanceVerdicts(api) {
  const res = await api.pool.request({ method: 'GET', path: '/metrics' });
  const text = await res.body.text();
  const verdicts = {};
  for (const m of text.matchAll(/^enroll_clearance_verdicts_total\{(.*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries(
      [...m[1].matchAll(/(\w+)="(\w+)"/g)].map((l) => [l[1], l[2]]),
    );
    verdicts[`${labels.verdict} by ${labels.by}`] = Number(m[2]);
  }
  return verdicts;
}

/** CPU seconds so far of each part of the run: the service, the students (this process), the stores, the machine. */
async function cpuNow(api) {
  const harness = process.cpuUsage();
  return {
    service: cpuSeconds(api.servicePid),
    students: (harness.user + harness.system) / 1e6,
    postgres: commandCpuSeconds('postgres'),
    redis: await stores.redisCpuSeconds(REDIS_URL),
    machine: machineCpuSeconds(),
  };
}

/**
 * Shares of all the machine's cores from the opening to the last settle: the service's, the students'
 * (this bench process: on the morning they are on their own devices), PostgreSQL's (every
 * backend), Redis's, the machine's busy (everyone's), and what the hypervisor gave other
 * guests — a run on a machine lent out more is slower with the same code. What is left beside
 * these is what the service could still have had.
 */
async function cpuShares(api, at0) {
  const at1 = await cpuNow(api);
  const all = at1.machine.all - at0.machine.all;
  const share = (k) => (at1[k] === null || at0[k] === null ? null : (at1[k] - at0[k]) / all);
  return {
    service: share('service'),
    students: share('students'),
    postgres: share('postgres'),
    redis: share('redis'),
    machineBusy: (at1.machine.busy - at0.machine.busy) / all,
    steal: (at1.machine.steal - at0.machine.steal) / all,
  };
}

/**
 * `auto`: every student Join-alls with autoEnroll and only watches (API.md v4); the cost of
 * Join all against separate joins is then not measured again.
 */
async function termMorning(api, admin, { students: n, restMs = 0, auto = false }) {
  const term = `morning-${process.pid}-${++mornings}`;
  const m = await morning.setUpMorning(api, admin, { term, n, prefix: auto ? 'ta' : 'tm', auto });
  let cost = { separate: null, together: null };
  if (!auto) {
    log(`term morning: what Join all costs against separate joins (${n} students)`);
    cost = await joinAllCost(api, admin, m.students);
  }
  log(`term morning: ${n} students plan ${PLAN} of ${LECTURES} lectures (${m.seats} seats each)`);
  const opened = await morning.planAndOpenPages(api, m);
  const streamsOpen = await memoryAt(api);
  // Join all, before opening: everyone pre-queued for the draw.
  const joinAll = await morning.joinAllPreQueued(api, m);

  // Registration opens: every lecture's opensAt moved to a moment from now (the pre-queue
  // stays, and is drawn then), 2 s unless --opening-in says otherwise.
  const opensAt = Date.now() + OPENING_IN_MS;
  for (const s of m.students) s.opensAt = opensAt;
  await morning.openLectures(api, admin, m, opensAt);
  const frames0 = m.run.frames;
  const cpu0 = await cpuNow(api);
  await morning.untilSettled(m.students, opensAt + STAMPEDE_TIMEOUT_MS);
  const endedAt = Date.now();
  const cpu = await cpuShares(api, cpu0);
  const clearance = await clearanceVerdicts(api);
  const framesPerSecond = (m.run.frames - frames0) / ((endedAt - opensAt) / 1000);
  const atEnd = await memoryAt(api);
  // With `restMs`, once more `restMs` after the end, the pages still open (and still reopening
  // the streams the service ended), or sooner if the service gave memory back meanwhile
  // (memory/: after a few idle seconds); and once more after the pages have closed.
  const atRest = restMs > 0 ? await memoryAtRest(api, atEnd, endedAt, restMs) : null;
  const end = await morning.closePages(api, admin, m);
  const closedAt = Date.now();
  const pagesClosed = restMs > 0 ? await memoryAtRest(api, atRest, closedAt, 30_000) : null;
  const pg = await stores.termFigures(DB_URL, term, opensAt);
  return {
    ...morning.outcomes(m, end, pg),
    streams: opened,
    streamsPerStudent: opened.streams / n,
    // At the end: every student settled, their streams still open (the service's peak RSS is
    // `rssMb`, which withService sets).
    memory: { streamsOpen, atEnd, atRest, pagesClosed },
    joinAll,
    separateJoins: cost.separate,
    joinAllAlone: cost.together,
    opensAt,
    finalSeconds: morning.finalSeconds(m.students),
    // The busiest 1 s of requests the students sent from the opening to the last settle.
    peakRequests: api.sent.peak(opensAt, endedAt + 1),
    // Status frames the students' streams received per second, from the opening to the end.
    framesPerSecond,
    cpu,
    clearance,
  };
}

module.exports = { termMorning };
