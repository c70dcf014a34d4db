// The registration morning's table: each figure beside its reference from the same run.
const mark = (ok) => (ok === null ? 'n/a' : ok ? 'met' : '**missed**');
const f = (n, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n) ? 'n/a' : Number(n).toFixed(digits);

/** The table, its ratios, and whether every invariant held; `pgbenchTps`: the same run's best. */
function termTable(t, pgbenchTps) {
  const pgSeconds = pgbenchTps ? t.seatsTaken / pgbenchTps : null;
  const fill = t.lastSeatSeconds !== null && pgSeconds ? t.lastSeatSeconds / pgSeconds : null;
  const wastedShare = t.admitted > 0 ? t.wasted / t.admitted : null;
  const broken = Object.values(t.invariants).reduce((sum, n) => sum + Math.abs(n), 0);
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
    [
      'invariants 1–3, 5–8 in PostgreSQL after the run (violations)',
      String(broken),
      Object.entries(t.invariants)
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
      '',
      `0: ${broken === 0 ? 'met' : '**FAILED**'}`,
    ],
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

/**
 * RSS beside the V8 heap (in use / total; and alive, after the collection a snapshot makes,
 * with BENCH_HEAP_SNAPSHOTS) with every stream open before the opening and at the end of the
 * morning; and the peak. The target: 300 MB at both moments.
 */
function memoryRows(t) {
  const { streamsOpen, atEnd } = t.memory;
  const heap = (m) =>
    `V8 heap ${f(m.heapUsedMb)} in use / ${f(m.heapTotalMb)}` +
    (m.heapLiveMb === null ? '' : `, ${f(m.heapLiveMb)} alive`);
  const within = (m) => m.rssMb !== null && m.rssMb <= 300;
  return [
    [
      'service RSS with every stream open / at the end of the morning (MB)',
      `${f(streamsOpen.rssMb)} / ${f(atEnd.rssMb)}`,
      `${heap(streamsOpen)}; at the end ${heap(atEnd)}`,
      '',
      `≤ 300 at both: ${mark(within(streamsOpen) && within(atEnd))}`,
    ],
    ...(t.memory.atRest
      ? [['service RSS after 15 s idle at the end (MB)', f(t.memory.atRest.rssMb), heap(t.memory.atRest), '', '']] // prettier-ignore
      : []),
    ['service peak RSS over the whole run (MB)', f(t.rssMb), '', '', ''],
  ];
}

module.exports = { termTable };
