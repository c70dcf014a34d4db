// A term's registration morning: every student has planned five lectures of one term, has the
// page open (its one term stream) before opening, pre-queued them all with one Join all, and
// at opensAt acts as the page makes it: Enroll each ticket as it comes, Swap when a conflict
// appears and the new lecture is preferred, give up what can no longer be used.
const { percentile, now, sleep } = require('../lib/load');
const stores = require('../lib/stores');
const { memoryAt } = require('../lib/service-memory');

const { adminJson, createLecture, setTermLimit } = require('../lib/lectures');
const { openStream } = require('../lib/sse');
const { REDIS_URL, DB_URL, STAMPEDE_TIMEOUT_MS, token, log } = require('../lib/run-config');

const LECTURES = 40;
const PLAN = 5;
const HOLD = 4; // the credit limit: four lectures' credits
const CREDITS = 3;
/** 30 weekly slots for 40 lectures: lectures i and i + 30 meet at the same time (10 pairs). */
const SLOTS = 30;
const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI'];
const STREAMS_OPEN_IN_CHUNKS_OF = 250;
const CALLS_AT_ONCE = 200;

let mornings = 0;

/** A small seeded generator: the same plans in every run. */
function random(seed) {
  let x = seed >>> 0 || 1;
  return () => (x = (x * 1_103_515_245 + 12_345) >>> 0) / 2 ** 32;
}

/** Five distinct lectures, drawn with popularity 1/sqrt(rank): the first is the most wanted. */
function drawPlan(rnd, weights) {
  const picked = [];
  const left = weights.map((w, i) => [i, w]);
  while (picked.length < PLAN) {
    const total = left.reduce((sum, [, w]) => sum + w, 0);
    let r = rnd() * total;
    const k = left.findIndex(([, w]) => (r -= w) < 0);
    picked.push(left.splice(k === -1 ? left.length - 1 : k, 1)[0][0]);
  }
  return picked;
}

/** Runs `task` over `items`, `limit` at a time. */
async function inTurns(items, limit, task) {
  for (let i = 0; i < items.length; i += limit) await Promise.all(items.slice(i, i + limit).map(task)); // prettier-ignore
}

/**
 * What Join all costs against the separate joins it replaces: half the students join five
 * lectures with five POST …/queue each, the other half with one Join all each, the same number
 * of requests in flight. Lectures of a term of their own, pre-queued as on the morning.
 */
async function joinAllCost(api, admin, students) {
  const term = `join-cost-${process.pid}-${mornings}`;
  const opensAt = new Date(Date.now() + 3600_000).toISOString();
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

async function termMorning(api, admin, { students: n, restMs = 0 }) {
  const term = `morning-${process.pid}-${++mornings}`;
  await setTermLimit(api, admin, term, HOLD * CREDITS);
  const seats = Math.max(1, Math.round((0.6 * n * PLAN) / LECTURES));
  const later = new Date(Date.now() + 3600_000).toISOString();
  const lectures = [];
  for (let i = 0; i < LECTURES; i++) {
    const slot = i % SLOTS;
    const hour = 8 + Math.floor(slot / DAYS.length);
    const at = (h) => `${String(h).padStart(2, '0')}:00`;
    lectures.push(
      await createLecture(api, admin, {
        term, capacity: seats, credits: CREDITS, courseCode: `M${i}`, opensAt: later,
        meetings: [{ day: DAYS[slot % DAYS.length], start: at(hour), end: at(hour + 1) }],
        admission: { preQueueMinutes: 120 },
      }),
    ); // prettier-ignore
  }
  const slotOf = new Map(lectures.map((l, i) => [l.id, i % SLOTS]));
  const weights = lectures.map((_, i) => 1 / Math.sqrt(i + 1));
  const rnd = random(n);
  const run = { t0: Infinity, enrolls: 0, swaps: 0, leaves: 0, refusals: {}, settled: 0, retries: 0 }; // prettier-ignore
  const students = Array.from({ length: n }, (_, i) => ({
    id: `tm${i}`,
    token: token(`tm${i}`),
    plan: drawPlan(rnd, weights).map((k) => lectures[k].id),
    held: new Set(),
    settled: new Map(),
    busy: new Set(),
    finalAt: null,
    chain: Promise.resolve(),
  }));
  for (const s of students) s.rank = new Map(s.plan.map((id, r) => [id, r]));

  log(`term morning: what Join all costs against separate joins (${n} students)`);
  const cost = await joinAllCost(api, admin, students);
  log(`term morning: ${n} students plan ${PLAN} of ${LECTURES} lectures (${seats} seats each)`);
  await inTurns(students, CALLS_AT_ONCE, async (s) => {
    const res = await api.request('PUT', `/me/terms/${term}/plan`, s.token, { body: { lectureIds: s.plan } }); // prettier-ignore
    if (res.status !== 200) throw new Error(`plan: ${res.status} ${JSON.stringify(res.body)}`);
  });
  // The page is open before registration opens: one term stream per student.
  const opened = { streams: 0, refused: 0 };
  for (let i = 0; i < students.length; i += STREAMS_OPEN_IN_CHUNKS_OF) {
    await Promise.all(
      students.slice(i, i + STREAMS_OPEN_IN_CHUNKS_OF).map(async (s) => {
        s.stream = await openStream(api.url, `/me/terms/${term}/events`, s.token, (event, data) => {
          if (event === 'status') onStatus(api, run, s, slotOf, data);
        });
        if (s.stream.status === 200) opened.streams += 1;
        else opened.refused += 1;
      }),
    );
  }
  const streamsOpen = await memoryAt(api);
  // Join all, before opening: everyone pre-queued for the draw.
  const [c0, u0] = await stores.redisCost(REDIS_URL);
  const j0 = now();
  const joinAll = [];
  await inTurns(students, CALLS_AT_ONCE, async (s) => {
    const res = await api.request('POST', `/me/terms/${term}/plan/queue`, s.token);
    joinAll.push(res.ms);
    if (res.status !== 200 || res.body.items.some((i) => i.status !== 'PRE_QUEUED')) {
      throw new Error(`join all: ${res.status} ${JSON.stringify(res.body)}`);
    }
  });
  const joinAllSeconds = (now() - j0) / 1000;
  const [c1, u1] = await stores.redisCost(REDIS_URL);

  // Registration opens: every lecture's opensAt moved to a moment from now (the pre-queue
  // stays, and is drawn then).
  const opensAt = Date.now() + 2000;
  await Promise.all(
    lectures.map((l) => adminJson(api, admin, 'PATCH', `/lectures/${l.id}`, { opensAt: new Date(opensAt).toISOString() }, 200)), // prettier-ignore
  );
  run.t0 = opensAt;
  const deadline = opensAt + STAMPEDE_TIMEOUT_MS;
  while (run.settled < n && Date.now() < deadline) await sleep(100);
  const atEnd = await memoryAt(api);
  // With `restMs`, once more after the service has been idle that long: what it keeps after
  // the morning (V8 collects when allocation has stopped for some seconds, not at once).
  const atRest = restMs > 0 ? (await sleep(restMs), await memoryAt(api)) : null;
  // Places still open at the end, by the last status the student saw (none when all settled).
  const unsettled = {};
  for (const s of students) {
    for (const id of s.plan.filter((x) => !s.settled.has(x))) {
      const last = s.last?.get(id) ?? 'nothing';
      unsettled[last] = (unsettled[last] ?? 0) + 1;
    }
  }
  for (const s of students) s.stream.close();

  const stats = await Promise.all(
    lectures.map((l) => adminJson(api, admin, 'GET', `/lectures/${l.id}/stats`, undefined, 200)),
  );
  const admitted = stats.reduce((sum, x) => sum + x.admittedTotal, 0);
  const pg = await stores.termFigures(DB_URL, term, opensAt);
  const finals = students.filter((s) => s.finalAt !== null).map((s) => s.finalAt);
  const takenSeconds = pg.lastSeatMs === null ? null : pg.lastSeatMs / 1000;
  return {
    students: n,
    lectures: LECTURES,
    seatsPerLecture: seats,
    seatsTaken: pg.rows,
    fullLectures: pg.fullLectures,
    streams: opened,
    streamsPerStudent: opened.streams / n,
    // At the end: every student settled, their streams still open (the service's peak RSS is
    // `rssMb`, which withService sets).
    memory: { streamsOpen, atEnd, atRest },
    joinAll: {
      perSecond: n / joinAllSeconds,
      joinsPerSecond: (n * PLAN) / joinAllSeconds,
      p50: percentile(joinAll, 50),
      p99: percentile(joinAll, 99),
      redisCommandsPerJoin: (c1 - c0) / (n * PLAN),
      redisUsecPerJoin: (u1 - u0) / (n * PLAN),
    },
    separateJoins: cost.separate,
    joinAllAlone: cost.together,
    lastSeatSeconds: takenSeconds,
    finalSeconds: {
      p50: percentile(finals, 50) / 1000,
      p99: percentile(finals, 99) / 1000,
      settled: finals.length,
    },
    admitted,
    enrolls: run.enrolls,
    swaps: run.swaps,
    leaves: run.leaves,
    refusals: run.refusals,
    unsettled,
    enrollRetries: run.retries,
    wasted: admitted - run.enrolls,
    invariants: { ...pg.violations, rowsVsAnswers: pg.rows - (run.enrolls - run.swaps) },
  };
}

/** What the page makes the student do when a lecture's status arrives on the term stream. */
function onStatus(api, run, s, slotOf, st) {
  const id = st.lectureId;
  (s.last ??= new Map()).set(id, `${st.status}${st.seatsLeft === 0 ? '/0' : ''}`);
  if (!s.rank.has(id) || s.settled.has(id) || s.busy.has(id)) return;
  if (st.status === 'ENROLLED') return settle(run, s, id, 'held');
  // One action at a time, as on the page (its buttons are disabled while one runs): a second
  // ticket waits for the first enroll's answer, then is used or given back knowing it.
  if (st.status === 'ADMITTED') {
    s.busy.add(id);
    s.chain = s.chain.then(() => act(api, run, s, slotOf, id));
    return;
  }
  if (st.seatsLeft === 0 && st.status !== 'ADMITTED') return settle(run, s, id, 'full');
  // A ticket lapsed (never here: the student enrolls at once) or a place lost: nothing to wait for.
  if (st.status === 'NOT_QUEUED' && Date.now() > run.t0) settle(run, s, id, 'lost');
}

async function act(api, run, s, slotOf, id) {
  try {
    if (s.settled.has(id)) return;
    const held = [...s.held].find((h) => slotOf.get(h) === slotOf.get(id));
    if (s.held.size >= HOLD || (held !== undefined && s.rank.get(held) < s.rank.get(id))) {
      return await leave(api, run, s, id);
    }
    const body = held === undefined ? undefined : { swapFrom: held };
    let res;
    // A 503 leaves the ticket with the student (API.md): try again, as the page's button does.
    for (let tries = 0; tries < 5; tries++) {
      res = await api.request('POST', `/lectures/${id}/enroll`, s.token, { lane: 'enroll', body });
      if (res.status !== 503 && res.status !== 0) break;
      run.retries += 1;
      await sleep(200);
    }
    if (res.status === 201) {
      run.enrolls += 1;
      if (held !== undefined) {
        run.swaps += 1;
        s.held.delete(held);
      }
      s.held.add(id);
      settle(run, s, id, 'held');
      await giveUpWhatCannotBeUsed(api, run, s, slotOf);
    } else {
      const code = res.body?.code ?? String(res.status);
      run.refusals[code] = (run.refusals[code] ?? 0) + 1;
      // A refused rule or a store still failing: the ticket goes to the next student at once.
      if (!['FULL', 'NO_TICKET', 'CLOSED'].includes(code)) await leave(api, run, s, id);
      else settle(run, s, id, code);
    }
  } finally {
    s.busy.delete(id);
  }
}

/**
 * After a seat: the places the student can no longer use go to the students behind at once —
 * all of them at the credit limit; otherwise those meeting when a held, preferred lecture does.
 */
async function giveUpWhatCannotBeUsed(api, run, s, slotOf) {
  const useless = s.plan.filter((id) => {
    if (s.settled.has(id) || s.held.has(id)) return false;
    if (s.held.size >= HOLD) return true;
    const held = [...s.held].find((h) => slotOf.get(h) === slotOf.get(id));
    return held !== undefined && s.rank.get(held) < s.rank.get(id);
  });
  await Promise.all(useless.map((id) => leave(api, run, s, id)));
}

async function leave(api, run, s, id) {
  s.busy.add(id);
  await api.request('DELETE', `/lectures/${id}/queue`, s.token);
  run.leaves += 1;
  s.busy.delete(id);
  settle(run, s, id, 'given up');
}

function settle(run, s, id, how) {
  if (s.settled.has(id)) return;
  s.settled.set(id, how);
  if (s.settled.size === s.plan.length && s.finalAt === null) {
    s.finalAt = Date.now() - run.t0;
    run.settled += 1;
  }
}

module.exports = { termMorning };
