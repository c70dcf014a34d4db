// The registration morning's table: each figure beside its reference from the same run.
const { cpus } = require('node:os');
const mark = (ok) => (ok === null ? 'n/a' : ok ? 'met' : '**missed**');
const pct = (share) => (share === null ? null : share * 100);
const f = (n, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n) ? 'n/a' : Number(n).toFixed(digits);

/** The table, its ratios, and whether every invariant held; `pgbenchTps`: the same run's best. */
function termTable(t, pgbenchTps) {
  const pgSeconds = pgbenchTps ? t.seatsTaken / pgbenchTps : null;
  const fill = t.lastSeatSeconds !== null && pgSeconds ? t.lastSeatSeconds / pgSeconds : null;
  const wastedShare = t.admitted > 0 ? t.wasted / t.admitted : null;
  const broken = violations(t.invariants);
  const rows = [
    ['figure', 'this service', 'reference (same run)', 'ratio', 'target'],
    ['---', '---:', '---:', '---:', '---'],
    [
      'opening to the last seat taken (s)',
      f(t.lastSeatSeconds, 2),
      pgSeconds
        ? `${f(pgSeconds, 2)} = ${t.seatsTaken} seats taken / pgbench`
        : 'pgbench unavailable',
      f(fill, 2),
      `≤ 2: ${mark(fill === null ? null : fill <= 2)}`,
    ],
    [
      "students' opening to final timetable p50 / p99 (s)",
      `${f(t.finalSeconds.p50, 2)} / ${f(t.finalSeconds.p99, 2)}`,
      `${t.finalSeconds.settled} of ${t.students} settled`,
      '',
      `p99 < 3: ${mark(t.finalSeconds.settled === t.students && t.finalSeconds.p99 < 3)}`,
    ],
    [
      'admissions wasted (granted, never used: given back, expired or refused)',
      `${t.wasted} of ${t.admitted}`,
      `${t.enrolls} enrolls (${t.swaps} swaps), ${t.leaves} places given up`,
      f(wastedShare === null ? null : wastedShare * 100, 2) + ' %',
      `≤ 2 %: ${mark(wastedShare === null ? null : wastedShare <= 0.02)}`,
    ],
    [
      'live streams per student',
      f(t.streamsPerStudent, 2),
      `${t.streams.streams} streams for ${t.students} students (${t.streams.refused} refused)`,
      '',
      `1: ${mark(t.streams.streams === t.students)}`,
    ],
    [
      'Join all: plans/s, joins/s, p50 / p99 (ms)',
      `${f(t.joinAll.perSecond)} / ${f(t.joinAll.joinsPerSecond)}, ${f(t.joinAll.p50, 1)} / ${f(t.joinAll.p99, 1)} (the morning's); ${f(t.joinAllAlone.joinsPerSecond)} joins/s alike`,
      t.separateJoins
        ? `${f(t.separateJoins.joinsPerSecond)} joins/s as separate POST …/queue`
        : '',
      t.separateJoins ? f(t.joinAllAlone.joinsPerSecond / t.separateJoins.joinsPerSecond, 2) : '',
      `≥ 1 (no dearer than the joins it replaces): ${t.separateJoins ? mark(t.joinAllAlone.joinsPerSecond >= t.separateJoins.joinsPerSecond) : 'n/a'}`,
    ],
    [
      'Join all: Redis commands / µs per join',
      `${f(t.joinAllAlone.redisCommandsPerJoin, 1)} / ${f(t.joinAllAlone.redisUsecPerJoin, 1)}`,
      t.separateJoins
        ? `${f(t.separateJoins.redisCommandsPerJoin, 1)} / ${f(t.separateJoins.redisUsecPerJoin, 1)} separate joins`
        : '',
      '',
      '',
    ],
    invariantsRow(t),
    [
      'peak request rate from the opening: the busiest 1 s (requests/s, as sent)',
      f(t.peakRequests.perSecond),
      `${f((t.peakRequests.at - t.opensAt) / 1000, 1)} s after the opening`,
      '',
      '',
    ],
    ['status frames received per second from the opening, all streams', f(t.framesPerSecond), '', '', ''], // prettier-ignore
    ...memoryRows(t),
  ];
  const header =
    `Registration morning: ${t.students} students, ${t.lectures} lectures of one term with ${t.seatsPerLecture} seats each ` +
    `(60% of the plans' demand), plans of 5 drawn by popularity, a limit of 4 lectures' credits; ` +
    `${t.fullLectures} lectures filled; enroll refusals ${JSON.stringify(t.refusals)} after ${t.enrollRetries} retries of a 503; ` +
    `places unsettled at the end ${JSON.stringify(t.unsettled)}\n\n`;
  return {
    table: header + rows.map((row) => `| ${row.join(' | ')} |`).join('\n'),
    ratios: { termFillVsPgbench: fill, termWastedShare: wastedShare },
    ok: broken === 0,
  };
}

/** Invariants 1–3 and 5–9 after a morning, each by name, and whether they all held. */
function invariantsRow(t) {
  const broken = violations(t.invariants);
  const each = Object.entries(t.invariants).map(([k, n]) => `${k} ${n}`);
  return ['invariants 1–3, 5–9 in PostgreSQL after the run (violations)', String(broken), each.join(', '), '', `0: ${broken === 0 ? 'met' : '**FAILED**'}`]; // prettier-ignore
}

/** The sum of an object's values, each taken as a count. */
const violations = (invariants) => Object.values(invariants).reduce((sum, n) => sum + Math.abs(n), 0); // prettier-ignore

/**
 * The morning in windows (scenarios/term-windows.js): per window, its cohort's opening → last
 * seat against that cohort's seats ÷ pgbench, their final timetables and the peak request rate;
 * then the peak against the one-window morning's of the same run (`one`, or null).
 */
function windowsTable(t, one, pgbenchTps) {
  const pgSeconds = (seats) => (pgbenchTps ? seats / pgbenchTps : null);
  const ratio = (a, b) => (a !== null && b ? a / b : null);
  const rows = [
    ['window (cohort)', 'students', 'seats taken', 'opening → last seat of the cohort (s)', 'reference: its seats ÷ pgbench (s)', 'ratio', 'opening → first ticket seen (ms)', "students' opening → final timetable p50 / p99 (s)", 'settled (of them before their opening)', 'tickets given back unused', 'peak requests/s (busiest 1 s)', 'status frames received/s (by the cohorts still to open)', 'CPU: service / Redis (% of a core), machine busy (% of all cores)'], // prettier-ignore
    ['---', ...Array(12).fill('---:')],
    ...t.windows.map((w, i) => [
      `${w.name} (year ${w.year}${i === 0 ? "; the lectures' own opening" : ''})`,
      String(w.students),
      String(w.seatsTaken),
      f(w.lastSeatSeconds, 2),
      f(pgSeconds(w.seatsTaken), 2),
      f(ratio(w.lastSeatSeconds, pgSeconds(w.seatsTaken)), 2),
      f(w.firstTicketMs),
      `${f(w.finalSeconds.p50, 2)} / ${f(w.finalSeconds.p99, 2)}`,
      `${w.finalSeconds.settled} (${w.finalSeconds.beforeOpening})`,
      String(w.ticketsBack),
      f(w.peakRequests.perSecond),
      `${f(w.cpu.framesPerSecond)} (${f(w.cpu.laterCohortsFramesPerSecond)})`,
      `${f(pct(w.cpu.service))} / ${f(pct(w.cpu.redis))}, ${f(pct(w.cpu.machineBusy))}`,
    ]),
  ];
  const ratios = Object.fromEntries(
    t.windows.map((w) => [w.name, ratio(w.lastSeatSeconds, pgSeconds(w.seatsTaken))]),
  );
  const peakRatio = one ? ratio(t.peakRequests.perSecond, one.peakRequests.perSecond) : null;
  const broken = violations(t.invariants);
  const wastedShare = t.admitted > 0 ? t.wasted / t.admitted : null;
  const figures = [
    ['figure', 'this morning, in windows', 'reference (same run)', 'ratio', 'target'],
    ['---', '---:', '---:', '---:', '---'],
    [
      'peak request rate from the first opening: the busiest 1 s (requests/s, as sent)',
      f(t.peakRequests.perSecond),
      one ? `${f(one.peakRequests.perSecond)} the one-window morning of ${one.students} students` : 'n/a', // prettier-ignore
      f(peakRatio, 2),
      '',
    ],
    [
      "students' records imported in one `PUT /terms/:term/students` (s)",
      f(t.records.seconds, 2),
      `${t.records.created} created, ${t.records.updated} updated, ${t.records.unchanged} unchanged`,
      '',
      '',
    ],
    [
      'Join all, every plan pre-queued for its own window: plans/s, joins/s, p50 / p99 (ms)',
      `${f(t.joinAll.perSecond)} / ${f(t.joinAll.joinsPerSecond)}, ${f(t.joinAll.p50, 1)} / ${f(t.joinAll.p99, 1)}`,
      one ? `${f(one.joinAll.perSecond)} / ${f(one.joinAll.joinsPerSecond)}, ${f(one.joinAll.p50, 1)} / ${f(one.joinAll.p99, 1)} the one-window morning's` : '', // prettier-ignore
      one ? f(t.joinAll.joinsPerSecond / one.joinAll.joinsPerSecond, 2) : '',
      '',
    ],
    [
      'admissions wasted (granted, never used)',
      `${t.wasted} of ${t.admitted}`,
      `${t.enrolls} enrolls (${t.swaps} swaps), ${t.leaves} places given up`,
      f(wastedShare === null ? null : wastedShare * 100, 2) + ' %',
      '',
    ],
    invariantsRow(t),
  ];
  const header =
    `Registration morning in ${t.windows.length} windows: ${t.students} students in ${t.windows.length} cohorts of one year each ` +
    `(the one-window morning's ${t.lectures} lectures of ${t.seatsPerLecture} seats and plans), one window per cohort, never closing, ` +
    `each opened when the previous cohort had settled; ${t.seatsTaken} seats taken, ${t.fullLectures} lectures filled; ` +
    `the last seat ${f(t.lastSeatSeconds, 2)} s after the first opening; enroll refusals ${JSON.stringify(t.refusals)} after ` +
    `${t.enrollRetries} retries of a 503; places unsettled at the end ${JSON.stringify(t.unsettled)}\n\n`;
  const md = (rs) => rs.map((row) => `| ${row.join(' | ')} |`).join('\n');
  return {
    table: `${header}${md(rows)}\n\n${md(figures)}`,
    ratios: { windowFillVsPgbench: ratios, windowPeakVsOneWindow: peakRatio },
    ok: broken === 0 && t.streams.refused === 0,
  };
}

/** The memory target: RSS (read) at most 300 MB. */
const within = (m) => m.rssMb !== null && m.rssMb <= 300;

/** RSS at rest after the morning: whether the service gave memory back since, and its pause. */
function restRow(atRest, detail, when) {
  const off = !(Number(process.env.MEMORY_RECLAIM_IDLE_SECONDS) > 0);
  const since =
    atRest.gaveBack > 0
      ? `memory given back: ${atRest.gaveBack} full collection(s), ${f(atRest.pauseMs)} ms pause in all`
      : `memory not given back${off ? ' (MEMORY_RECLAIM_IDLE_SECONDS off)' : ' (never idle)'}`;
  return [
    `service RSS ${f(atRest.seconds)} s after ${when} (MB)`,
    f(atRest.rssMb),
    `${detail}; ${since}`,
    '',
    `≤ 300: ${mark(within(atRest))}`,
  ];
}

/**
 * RSS beside the V8 heap (in use / total; and alive, after the collection a snapshot makes,
 * with BENCH_HEAP_SNAPSHOTS) with every stream open before the opening and at the end of the
 * morning; at rest after it (with `restMs`); and the peak. The target: 300 MB at both moments.
 */
function memoryRows(t) {
  const { streamsOpen, atEnd } = t.memory;
  const heap = (m) =>
    `V8 heap ${f(m.heapUsedMb)} in use / ${f(m.heapTotalMb)}` +
    (m.heapLiveMb === null ? '' : `, ${f(m.heapLiveMb)} alive`);
  return [
    [
      'service RSS with every stream open / at the end of the morning (MB)',
      `${f(streamsOpen.rssMb)} / ${f(atEnd.rssMb)}`,
      `${heap(streamsOpen)}; at the end ${heap(atEnd)}`,
      '',
      `≤ 300 at both: ${mark(within(streamsOpen) && within(atEnd))}`,
    ],
    ...(t.memory.atRest ? [restRow(t.memory.atRest, heap(t.memory.atRest), 'the end, the pages open')] : []), // prettier-ignore
    ...(t.memory.pagesClosed ? [restRow(t.memory.pagesClosed, heap(t.memory.pagesClosed), 'the pages closed')] : []), // prettier-ignore
    ['service peak RSS over the whole run (MB)', f(t.rssMb), '', '', ''],
  ];
}

/**
 * The morning with Join all auto-enrolling (API.md v4) beside the page-clicking morning of the
 * same run (`page`, or null), each figure against seats ÷ pgbench of the same run.
 */
function autoTable(a, page, pgbenchTps) {
  const seatsOverPg = (t) => (pgbenchTps ? t.seatsTaken / pgbenchTps : null);
  const over = (x, t) => (x !== null && seatsOverPg(t) ? x / seatsOverPg(t) : null);
  const both = (fn) => [fn(a), page ? fn(page) : 'n/a'];
  const fill = over(a.lastSeatSeconds, a);
  const final = a.finalSeconds.settled === a.students ? over(a.finalSeconds.p99, a) : null;
  const broken = violations(a.invariants);
  const rows = [
    ['figure', 'Join all, auto-enrolling', 'page-clicking students (same run)', 'reference (same run)', 'target'], // prettier-ignore
    ['---', '---:', '---:', '---:', '---'],
    [
      'opening → last seat taken (s); ÷ seats ÷ pgbench',
      ...both((t) => `${f(t.lastSeatSeconds, 2)}; ${f(over(t.lastSeatSeconds, t), 2)}`),
      `${f(seatsOverPg(a), 2)} s = ${a.seatsTaken} seats ÷ pgbench`,
      `≤ 1: ${mark(fill === null ? null : fill <= 1)}`,
    ],
    [
      "students' opening → final timetable p50 / p99 (s); p99 ÷ seats ÷ pgbench",
      ...both((t) => `${f(t.finalSeconds.p50, 2)} / ${f(t.finalSeconds.p99, 2)}; ${f(over(t.finalSeconds.p99, t), 2)} (${t.finalSeconds.settled} of ${t.students} settled)`), // prettier-ignore
      '',
      `≤ 1: ${mark(final === null ? null : final <= 1)}`,
    ],
    [
      'grant → seat committed p50 / p99 (ms)',
      ...both((t) => (t.grantToSeat ? `${f(t.grantToSeat.p50)} / ${f(t.grantToSeat.p99)} (n=${t.grantToSeat.n})` : 'n/a')), // prettier-ignore
      '',
      `auto p99 ≤ 1000: ${mark(a.grantToSeat?.p99 == null ? null : a.grantToSeat.p99 <= 1000)}`,
    ],
    [
      'admissions wasted (granted, never used: given back, expired or refused)',
      ...both((t) => `${t.wasted} of ${t.admitted} (${f(pct(t.admitted > 0 ? t.wasted / t.admitted : null), 2)} %)`), // prettier-ignore
      `refused: ${JSON.stringify(a.refusals)}`,
      `0: ${mark(a.wasted === 0)}`,
    ],
    [
      '… of them granted to a student already at their limit (seats begun before the grant)',
      ...both((t) => (t.wastedAtLimit ? `${t.wastedAtLimit.atLimit} of ${t.wastedAtLimit.unused} unused` : 'n/a')), // prettier-ignore
      "the rest: granted before the seat that made it unusable (the limit's, or a conflict's) had begun",
      '',
    ],
    [
      'seats taken; places unsettled at the end',
      ...both((t) => `${t.seatsTaken}; ${JSON.stringify(t.unsettled)}`),
      '',
      '',
    ],
    [
      'invariants 1–3, 5–10 in PostgreSQL after the run (violations)',
      ...both((t) => `${violations(t.invariants)} (${Object.entries(t.invariants).map(([k, n]) => `${k} ${n}`).join(', ')})`), // prettier-ignore
      '',
      `0: ${broken === 0 ? 'met' : '**FAILED**'}`,
    ],
    [
      'service RSS with every stream open / at the end (MB)',
      ...both((t) => `${f(t.memory.streamsOpen.rssMb)} / ${f(t.memory.atEnd.rssMb)}`),
      '',
      `≤ 300 at both: ${mark(within(a.memory.streamsOpen) && within(a.memory.atEnd))}`,
    ],
    ...(a.memory.atRest
      ? [
          [
            'service RSS after the end, pages open / once the pages closed (MB; s after)',
            ...both((t) => (t.memory.atRest ? `${f(t.memory.atRest.rssMb)} (${f(t.memory.atRest.seconds)} s) / ${f(t.memory.pagesClosed.rssMb)} (${f(t.memory.pagesClosed.seconds)} s)` : 'n/a')), // prettier-ignore
            '',
            `≤ 300: ${mark(within(a.memory.atRest))} / ${mark(within(a.memory.pagesClosed))}`,
          ],
        ]
      : []),
    ['status frames received per second from the opening, all streams', ...both((t) => f(t.framesPerSecond)), '', ''], // prettier-ignore
    [
      `CPU from the opening to the last settle, % of the ${cpus().length} cores: service / students (the bench) / PostgreSQL / Redis; machine busy`,
      ...both((t) => (t.cpu ? `${['service', 'students', 'postgres', 'redis'].map((k) => f(pct(t.cpu[k]))).join(' / ')}; ${f(pct(t.cpu.machineBusy))}` : 'n/a')), // prettier-ignore
      `the service is one event loop: ${f(100 / cpus().length)} % is all of one core`,
      '',
    ],
  ];
  const header =
    `Registration morning with Join all auto-enrolling: ${a.students} students, the same lectures, seats and plans as ` +
    `the page-clicking morning, in a service of its own\n\n`;
  return {
    table: header + rows.map((row) => `| ${row.join(' | ')} |`).join('\n'),
    ratios: { autoFillVsPgbench: fill, autoFinalP99VsPgbench: final, autoWasted: a.wasted },
    ok: broken === 0,
  };
}

module.exports = { termTable, windowsTable, autoTable };
