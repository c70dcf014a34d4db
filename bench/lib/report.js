// Turns one run's figures into the Markdown table (stdout) and the ratios to its references.
const f = (n, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n) ? 'n/a' : Number(n).toFixed(digits);
const ratio = (a, b) => (a && b ? a / b : null);

function markdown(r) {
  const s = r.stampede;
  const pgLimit = r.pgbench.available ? r.pgbench.best : null;
  const fillFloor = pgLimit ? r.seats / pgLimit : null;
  const inv = s.invariants;
  const ratios = {
    joinRateVsFloor: ratio(s.join.rate, r.floor.rate),
    hotEnrollRateVsPgbench: ratio(r.hot.rate, pgLimit),
    rulesCost: ratio(r.hotRules.rate, r.hot.rate),
    windowsCost: ratio(r.hotWindows?.rate, r.hot.rate),
    windowRuleCost: ratio(r.hotWindows?.rate, r.hotRecords?.rate),
    packageCost: ratio(r.hotPackages?.rate, r.hot.rate),
    bodyCost: ratio(r.hotWithBody?.rate, r.hot.rate),
    fillTimeVsPgbench: ratio(s.fillSeconds, fillFloor),
    wastedShareOfSeats: s.wasted / r.seats,
  };
  const ok =
    inv.oversold === 0 && inv.doubleSeats === 0 && inv.outOfOrder === 0 &&
    r.hot.invariants.oversold === 0 && r.hot.invariants.doubleSeats === 0 &&
    r.hotRules.invariants.oversold === 0 && r.hotRules.invariants.doubleSeats === 0 &&
    r.hotRules.enrolled === r.hotRules.students &&
    (!r.hotPackages || (r.hotPackages.invariants.oversold === 0 && r.hotPackages.invariants.doubleSeats === 0 &&
      r.hotPackages.enrolled === r.hotPackages.students)) &&
    (!r.hotWindows || (r.hotWindows.invariants.oversold === 0 && r.hotWindows.invariants.doubleSeats === 0 &&
      r.hotWindows.enrolled === r.hotWindows.students)); // prettier-ignore
  const target = (value, cmp, limit) =>
    value === null ? 'n/a' : cmp(value, limit) ? 'met' : '**missed**';
  const ge = (a, b) => a >= b;
  const le = (a, b) => a <= b;
  const rows = [
    ['figure', 'this service', 'reference (same run)', 'ratio', 'target'],
    ['---', '---:', '---:', '---:', '---'],
    [
      'join rate (req/s)',
      f(s.join.rate),
      `${f(r.floor.rate)} bare node:http + ZADD NX/ZRANK`,
      f(ratios.joinRateVsFloor, 2),
      `≥ 0.5: ${target(ratios.joinRateVsFloor, ge, 0.5)}`,
    ],
    [
      'join p50 / p99 (ms)',
      `${f(s.join.p50, 1)} / ${f(s.join.p99, 1)}`,
      `${f(r.floor.p50, 1)} / ${f(r.floor.p99, 1)}`,
      '',
      '',
    ],
    [
      'enroll rate, one hot lecture (/s)',
      f(r.hot.rate),
      pgLimit
        ? `${f(pgLimit)} pgbench (best of ${Object.entries(r.pgbench.byClients)
            .map(([c, t]) => `${c}c ${f(t)}`)
            .join(', ')})`
        : 'pgbench unavailable',
      f(ratios.hotEnrollRateVsPgbench, 2),
      `≥ 0.5: ${target(ratios.hotEnrollRateVsPgbench, ge, 0.5)}`,
    ],
    [
      'enroll rate, hot lecture, students holding 4–5 lectures of the term (/s)',
      f(r.hotRules.rate),
      `${f(r.hot.rate)} the same, students holding nothing`,
      f(ratios.rulesCost, 2),
      `≥ 0.8: ${target(ratios.rulesCost, ge, 0.8)}`,
    ],
    [
      "enroll rate, hot lecture in a term with 4 registration windows, every student's record, holds on a tenth as many others (/s)",
      f(r.hotWindows?.rate),
      `${f(r.hot.rate)} the same, a term without windows`,
      f(ratios.windowsCost, 2),
      `≥ 0.9: ${target(ratios.windowsCost, ge, 0.9)}`,
    ],
    [
      'the same against its records and holds in a term without windows (what the window rule costs)',
      f(r.hotWindows?.rate),
      `${f(r.hotRecords?.rate)} records and holds, no windows`,
      f(ratios.windowRuleCost, 2),
      `≥ 0.9: ${target(ratios.windowRuleCost, ge, 0.9)}`,
    ],
    [
      'enroll rate, hot lecture taken with one of two discussions (/s)',
      f(r.hotPackages?.rate),
      `${f(r.hot.rate)} the lecture alone`,
      f(ratios.packageCost, 2),
      `≥ 0.8: ${target(ratios.packageCost, ge, 0.8)}`,
    ],
    [
      'enroll rate, hot lecture, each enroll sending `{"sections": []}` (/s)',
      f(r.hotWithBody?.rate),
      `${f(r.hot.rate)} the same without a body (what a body costs)`,
      f(ratios.bodyCost, 2),
      '',
    ],
    [
      'time from opening to FULL (s)',
      f(s.fillSeconds, 2),
      fillFloor ? `${f(fillFloor, 2)} = seats / pgbench` : 'n/a',
      f(ratios.fillTimeVsPgbench, 1),
      `≤ 2: ${target(ratios.fillTimeVsPgbench, le, 2)}`,
    ],
    [
      'enroll p50 / p99 (ms)',
      `${f(s.enroll.p50, 1)} / ${f(s.enroll.p99, 1)}`,
      `${f(r.peer.p50, 1)} / ${f(r.peer.p99, 1)} peer without a queue`,
      '',
      '',
    ],
    [
      'peer: errors / fill time (s) / oversold',
      '',
      `${r.peer.errors} / ${f(r.peer.fillSeconds, 2)} / ${r.peer.oversold}`,
      '',
      '',
    ],
    ['PostgreSQL transactions committed', String(s.pgCommits), `${r.peer.pgCommits} peer`, '', ''],
    ['Redis commands', String(s.redisCommands), '', '', ''],
    ...(s.admins?.watching
      ? [[
          'admins watching live stats / frames each per second',
          `${s.admins.watching} / ${f(s.admins.statsFrames / s.admins.watching / s.admins.seconds, 2)}`,
          '', '', '',
        ]] // prettier-ignore
      : []),
    [
      'Redis cost of one join: commands / CPU µs',
      `${f(s.join.redisCommandsPerJoin, 1)} / ${f(s.join.redisUsecPerJoin, 1)}`,
      '',
      '',
      '',
    ],
    [
      'wasted admissions (admitted, then FULL)',
      `${s.wasted} (${f(100 * ratios.wastedShareOfSeats, 2)}% of seats)`,
      '',
      '',
      `≤ 1%: ${target(ratios.wastedShareOfSeats, le, 0.01)}`,
    ],
    ['service peak RSS (MB)', f(s.rssMb), '', '', `≤ 300: ${target(s.rssMb, le, 300)}`],
    [
      'oversold / double seats / out-of-order admissions',
      `${inv.oversold} / ${inv.doubleSeats} / ${inv.outOfOrder}`,
      '',
      '',
      `all 0: ${ok ? 'met' : '**FAILED**'}`,
    ],
  ];
  const header =
    `Stampede: ${r.students} students, ${r.seats} seats, mode ${r.mode}, Redis ${r.redis ?? 'standalone'}, ${r.connections} client connections, ${r.date}\n` +
    `Student outcomes: ${Object.entries(s.outcomes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; double-clickers ${s.doubleClicks}\n\n`;
  const modeRows = modesTable(r);
  const runs = Object.values(r.clients || { x: r.modes || {} }).flatMap((m) => Object.values(m));
  const okAll =
    ok &&
    runs.every(
      (m) =>
        m.invariants.oversold === 0 &&
        m.invariants.doubleSeats === 0 &&
        m.invariants.outOfOrder === 0,
    );
  const table =
    header +
    rows.map((row) => `| ${row.join(' | ')} |`).join('\n') +
    modeRows +
    clientsTable(r, fillFloor) +
    streamsTable(r);
  return { table, ratios: { ...ratios, fillVsCron: modeRatios(r) }, ok: okAll };
}

function modeRatios(r, modes = r.modes) {
  const cron = modes?.cron?.fillSeconds;
  return Object.fromEntries(
    Object.entries(modes || {}).map(([m, x]) => [
      m,
      cron && x.fillSeconds ? cron / x.fillSeconds : null,
    ]),
  );
}

/** The admission modes side by side (one stampede each, same students and seats). */
function modesTable(r) {
  const modes = Object.entries(r.modes || {});
  if (modes.length < 2) return '';
  const speedup = modeRatios(r);
  const rows = [
    [
      'mode',
      'opening to FULL (s)',
      'sooner than cron',
      'slot freed → next admission p50 / p99 (ms)',
      'join rate (req/s)',
      'wasted',
      'oversold / double / out-of-order',
    ],
    ['---', '---:', '---:', '---:', '---:', '---:', '---'],
    ...modes.map(([m, x]) => [
      m,
      f(x.fillSeconds, 2),
      speedup[m] ? `${f(speedup[m], 1)}x` : 'n/a',
      `${f(x.slotWait.p50, 0)} / ${f(x.slotWait.p99, 0)} (n=${x.slotWait.count})`,
      f(x.join.rate),
      String(x.wasted),
      `${x.invariants.oversold} / ${x.invariants.doubleSeats} / ${x.invariants.outOfOrder}`,
    ]),
  ];
  return (
    '\n\nAdmission modes, one stampede each:\n\n' +
    rows.map((row) => `| ${row.join(' | ')} |`).join('\n')
  );
}

/** Streaming and polling students side by side, per admission mode (one stampede each). */
function clientsTable(r, fillFloor) {
  const kinds = Object.entries(r.clients || {});
  if (kinds.length === 0) return '';
  const rows = [
    ['clients', 'mode', 'opening to FULL (s)', '÷ seats/pgbench (target ≤ 2)', 'sooner than cron (target ≥ 10x)', 'granted → pushed to an open stream, received p50 / p99 (ms, target p99 < 100)', 'granted while waiting → noticed p50 / p99 (ms)', 'CPU: service / load generator (% of a core)', 'wasted', 'oversold / double / out-of-order'],
    ['---', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---'],
  ]; // prettier-ignore
  for (const [kind, modes] of kinds) {
    const speedup = modeRatios(r, modes);
    for (const [m, x] of Object.entries(modes)) {
      const n = x.timeline.noticeMs;
      const p = x.timeline.pushMs;
      rows.push([
        kind,
        m,
        f(x.fillSeconds, 2),
        f(ratio(x.fillSeconds, fillFloor), 2),
        speedup[m] ? `${f(speedup[m], 1)}x` : 'n/a',
        p?.count ? `${f(p.p50)} / ${f(p.p99)} (n=${p.count})` : 'n/a',
        `${f(n.p50)} / ${f(n.p99)} (n=${n.count})`,
        x.cpuShare ? `${f(x.cpuShare.service * 100)} / ${f(x.cpuShare.generator * 100)}` : 'n/a',
        String(x.wasted),
        `${x.invariants.oversold} / ${x.invariants.doubleSeats} / ${x.invariants.outOfOrder}`,
      ]);
    }
  }
  return (
    '\n\nStudents on the lecture page with its stream open before the opening (page), joining then opening a stream (sse), and polling (poll), one stampede each:\n\n' +
    rows.map((row) => `| ${row.join(' | ')} |`).join('\n')
  );
}

/** 5,000 open streams on one moving queue: memory and Redis commands per second. */
function streamsTable(r) {
  const o = r.openStreams;
  if (!o) return '';
  return (
    `\n\nOpen streams: ${o.streams} waiting students on live streams for ${f(o.seconds, 1)} s while the head ` +
    `left ${o.headLeaves} times (every position moved):\n\n` +
    '| figure | value | target |\n| --- | ---: | --- |\n' +
    `| service peak RSS (MB) | ${f(o.rssMb)} | ≤ 300: ${o.rssMb <= 300 ? 'met' : '**missed**'} |\n` +
    `| Redis commands/s (all of them, the leaves' own included) | ${f(o.redisCommandsPerSecond)} | < 2000: ${o.redisCommandsPerSecond < 2000 ? 'met' : '**missed**'} |\n` +
    `| status updates received per stream per second | ${f(o.updatesPerStreamPerSecond, 2)} | ≤ 1 |` +
    (o.push
      ? `\n| then ${o.push.asked} tickets handed on, one at a time: granted → pushed to the next student's open stream, received p50 / p99 (ms, of ${o.push.count}) | ${f(o.push.p50)} / ${f(o.push.p99)} | p99 < 100: ${o.push.count === o.push.asked && o.push.p99 < 100 ? 'met' : '**missed**'} |`
      : '')
  );
}

module.exports = { markdown };
