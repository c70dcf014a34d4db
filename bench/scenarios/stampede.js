// The stampede: every student joins at once, waits as its kind of client does (the page's
// stream, a stream opened after the join, or polling) and enrolls the moment it is admitted.
const { ENROLL_LANE_CONNECTIONS, percentile, now } = require('../lib/load');
const { cpuSeconds } = require('../lib/processes');
const stores = require('../lib/stores');
const { createLecture } = require('../lib/lectures');
const { pollingStudent, streamingStudent, openPage, pageStudent } = require('../lib/students');
const { openStream } = require('../lib/sse');
const {
  opt, STUDENTS, SEATS, REDIS_URL, DB_URL, STAMPEDE_TIMEOUT_MS, WARM_UP_REQUESTS, token,
} = require('../lib/run-config'); // prettier-ignore

const PAGES_OPEN_IN_CHUNKS_OF = 250;

let stampedes = 0;

/** All students join at once, then each waits (poll or sse) and enrolls the moment it is admitted. */
async function stampede(api, admin, kind) {
  const { id: warm } = await createLecture(api, admin, {
    capacity: 1,
    opensAt: '2099-01-01T00:00:00Z',
  });
  await Promise.all(
    Array.from({ length: WARM_UP_REQUESTS }, (_, i) =>
      api.request('GET', `/lectures/${warm}/queue`, token(`warm${i}`)),
    ),
  );
  // A student clicks "Enroll" in a browser already connected to the service (it joined and
  // holds its stream there): the enroll lane's connections are open before the opening too.
  await Promise.all(
    Array.from({ length: ENROLL_LANE_CONNECTIONS }, (_, i) =>
      api.request('GET', `/lectures/${warm}/queue`, token(`warm${i}`), { lane: 'enroll' }),
    ),
  );
  const students = Array.from({ length: STUDENTS }, (_, i) => ({
    id: `st${i}`,
    token: token(`st${i}`),
  }));
  const joinStorm = await pureJoinStorm(api, admin, students);

  // The opening: every student joins at once and, the moment its own join answers, waits
  // (polling GET …/queue, or on its live stream) and enrolls once admitted.
  // The same students come back in every stampede of a run: each lecture is in a term of its
  // own, so seats from the earlier ones never count against a credit limit here.
  const lecture = await createLecture(api, admin, { capacity: SEATS, term: `stampede-${++stampedes}` }); // prettier-ignore
  const id = lecture.id;
  // `--admins N`: N admins watch the lecture's live stats throughout the stampede.
  let statsFrames = 0;
  const watchers = await Promise.all(
    Array.from({ length: Number(opt.admins) }, (_, i) =>
      openStream(api.url, `/lectures/${id}/stats/events`, token(`admin${i}`, 'admin'), (event) => {
        if (event === 'stats') statsFrames += 1;
      }),
    ),
  );
  const run = {
    api, url: api.url, id, lecture, t0: now(), fillMs: null, enrollMs: [], freedAt: [], doubleClicks: 0,
  }; // prettier-ignore
  if (kind === 'page') {
    // Students on the lecture's page before registration opens: their streams are open first
    // (in chunks: a real crowd arrives over minutes, not in one instant).
    for (let i = 0; i < students.length; i += PAGES_OPEN_IN_CHUNKS_OF) {
      await Promise.all(
        students.slice(i, i + PAGES_OPEN_IN_CHUNKS_OF).map((s) => openPage(s, run)),
      );
    }
    run.t0 = now();
  }
  // Where the two cores go during the opening: the service's and this generator's CPU time.
  const cpu0 = { service: cpuSeconds(api.servicePid), generator: process.cpuUsage() };
  run.deadline = run.t0 + STAMPEDE_TIMEOUT_MS;
  const student = { sse: streamingStudent, poll: pollingStudent, page: pageStudent }[kind];
  await Promise.all(students.map((s) => student(s, run)));
  const { t0, fillMs, enrollMs, freedAt, doubleClicks } = run;
  const watchedSeconds = (now() - t0) / 1000;
  const generatorCpu = process.cpuUsage(cpu0.generator);
  const cpuShare = {
    seconds: watchedSeconds,
    service: (cpuSeconds(api.servicePid) - cpu0.service) / watchedSeconds,
    generator: (generatorCpu.user + generatorCpu.system) / 1e6 / watchedSeconds,
  };
  for (const w of watchers) w.close();

  const outcomes = {};
  for (const s of students) outcomes[s.outcome] = (outcomes[s.outcome] || 0) + 1;
  const inv = await stores.seatInvariants(DB_URL, id);
  return {
    lectureId: id,
    admins: {
      watching: watchers.filter((w) => w.status === 200).length,
      statsFrames,
      seconds: watchedSeconds,
    },
    join: joinStorm,
    cpuShare,
    fillSeconds: fillMs === null ? null : fillMs / 1000,
    enroll: {
      p50: percentile(enrollMs, 50),
      p99: percentile(enrollMs, 99),
      count: enrollMs.length,
    },
    doubleClicks,
    outcomes,
    wasted: outcomes['wasted: admitted, then FULL'] || 0,
    slotWait: slotWaits(students, freedAt, lecture),
    timeline: timeline(students, t0),
    invariants: {
      oversold: inv.oversold,
      doubleSeats: inv.doubleSeats,
      outOfOrder: outOfOrder(students),
      rows: inv.rows,
    },
  };
}

/** When things happened, in seconds from the opening: where the fill time goes. */
function timeline(students, t0) {
  const at = (xs, p) => (xs.length ? percentile(xs, p) / 1000 : null);
  const joined = students.map((s) => s.joinEnd - t0);
  const enrolled = students.filter((s) => s.enrolledAt !== undefined).map((s) => s.enrolledAt);
  const sent = students.filter((s) => s.enrollSentAt !== undefined).map((s) => s.enrollSentAt);
  const ttl = 300_000;
  // Only admissions granted while the student was already waiting: one granted before its own
  // join had even answered is noticed with the join's answer, which measures the join storm.
  const grantedAt = (s) => s.admittedKey - ttl;
  const waited = students.filter((s) => s.noticedAt && grantedAt(s) >= s.waitingSince);
  // Of those, the admissions a live stream could push: granted once the student's stream was
  // open. One granted between the join's answer and the stream's opening arrives as the
  // stream's first status, which measures the stream's opening, not the push.
  const pushed = waited.filter(
    (s) => s.streamOpenAt !== undefined && grantedAt(s) >= s.streamOpenAt,
  );
  const figures = (xs) => {
    const ms = xs.map((s) => s.noticedAt - grantedAt(s));
    return {
      p50: percentile(ms, 50),
      p90: percentile(ms, 90),
      p99: percentile(ms, 99),
      count: ms.length,
      max: percentile(ms, 100),
    };
  };
  return {
    noticeMs: figures(waited),
    pushMs: figures(pushed),
    firstJoinAnswered: at(joined, 0),
    lastJoinAnswered: at(joined, 100),
    firstEnrollSent: at(sent, 0),
    enrolled: {
      first: at(enrolled, 0),
      quarter: at(enrolled, 25),
      p75: at(enrolled, 75),
      p90: at(enrolled, 90),
      half: at(enrolled, 50),
      last: at(enrolled, 100),
    },
  };
}

/**
 * The join storm alone, on a lecture of its own, with the same students and connections as
 * the join floor gets: the figure the floor is compared with.
 */
async function pureJoinStorm(api, admin, students) {
  const { id } = await createLecture(api, admin, { capacity: SEATS });
  const [commands0, usec0] = await stores.redisCost(REDIS_URL);
  const t0 = now();
  const joins = await Promise.all(
    students.map((s) => api.request('POST', `/lectures/${id}/queue`, s.token)),
  );
  const seconds = (now() - t0) / 1000;
  const [commands1, usec1] = await stores.redisCost(REDIS_URL);
  const ms = joins.map((r) => r.ms);
  return {
    ok: joins.filter((r) => r.status === 201).length,
    rate: STUDENTS / seconds,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    // What one join costs Redis (all servers): commands as INFO commandstats counts them
    // (a script's own calls included) and the CPU time Redis spent in them.
    redisCommandsPerJoin: (commands1 - commands0) / STUDENTS,
    redisUsecPerJoin: (usec1 - usec0) / STUDENTS,
  };
}

/**
 * How long a freed slot waits for the next admission. The first min(maxActive, seats)
 * admissions need no freed slot; after that the k-th admission fills the slot the k-th
 * consumed ticket freed (admission instant = ticket expiry - lifetime, on the server's clock,
 * the same wall clock as this process's on one machine).
 */
function slotWaits(students, freedAt, lecture) {
  const ttl = lecture.admission.ticketTtlSeconds * 1000;
  const admissions = students
    .filter((s) => s.admittedKey !== undefined)
    .map((s) => s.admittedKey - ttl)
    .sort((a, b) => a - b);
  const frees = [...freedAt].sort((a, b) => a - b);
  const initial = Math.min(lecture.admission.maxActiveTickets, SEATS);
  const waits = [];
  for (let i = initial; i < admissions.length && i - initial < frees.length; i++) {
    waits.push(Math.max(0, admissions[i] - frees[i - initial]));
  }
  return { count: waits.length, p50: percentile(waits, 50), p99: percentile(waits, 99) };
}

/**
 * Admissions out of join order: students B admitted although someone A whose join had
 * completed before B's began was admitted later, or never (a ticket's expiry is its admission
 * instant plus one fixed lifetime, so it orders admissions).
 */
function outOfOrder(students) {
  const byEnd = [...students].sort((a, b) => a.joinEnd - b.joinEnd);
  const byStart = [...students].sort((a, b) => a.joinStart - b.joinStart);
  let i = 0;
  let latestBefore = -Infinity;
  let count = 0;
  for (const b of byStart) {
    while (i < byEnd.length && byEnd[i].joinEnd < b.joinStart) {
      latestBefore = Math.max(latestBefore, byEnd[i].admittedKey ?? Infinity);
      i++;
    }
    if (b.admittedKey !== undefined && latestBefore > b.admittedKey) count++;
  }
  return count;
}

module.exports = { stampede };
