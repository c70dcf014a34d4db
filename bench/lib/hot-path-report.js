// The hot path's tables: each rate against its floor, what a request costs Redis and the
// service, and where the service's time goes.
const f1 = (n) => (n === null || n === undefined ? 'n/a' : n.toFixed(1));
const f2 = (n) => (n === null || n === undefined ? 'n/a' : n.toFixed(2));
const int = (n) => (n === null || n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US'));
const met = (ok) => (ok ? 'met' : '**missed**');

/** The two tables, and the ratios the run's JSON carries. */
function hotPathTable(hp) {
  const joinRatio = hp.joins.rate / hp.floorJoins.rate;
  const readRatio = hp.reads.rate / hp.floorReads.rate;
  const windowJoinRatio = hp.windowJoins.rate / hp.joins.rate;
  const windowReadRatio = hp.windowReads.rate / hp.reads.rate;
  const rows = [
    `Hot path: ${int(hp.requests)} first joins, then as many status reads, ${hp.connections} connections, service and floor in turns (best of ${hp.turns} each)`,
    '',
    '| figure | this service | floor (same run) | ratio | target |',
    '| --- | ---: | ---: | ---: | --- |',
    `| first joins/s | ${int(hp.joins.rate)} | ${int(hp.floorJoins.rate)} bare node:http + ZADD NX/ZRANK | ${f2(joinRatio)} | ≥ 0.7: ${met(joinRatio >= 0.7)} |`,
    `| status reads (GET …/queue)/s | ${int(hp.reads.rate)} | ${int(hp.floorReads.rate)} bare node:http + ZRANK/ZCARD | ${f2(readRatio)} | ≥ 0.8: ${met(readRatio >= 0.8)} |`,
    `| the same, ACCESS_LOG=errors: first joins/s, status reads/s | ${int(hp.quietJoins.rate)}, ${int(hp.quietReads.rate)} | ${int(hp.floorJoins.rate)}, ${int(hp.floorReads.rate)} | ${f2(hp.quietJoins.rate / hp.floorJoins.rate)}, ${f2(hp.quietReads.rate / hp.floorReads.rate)} |  |`,
    `| the same, lecture of a term with 4 registration windows, every joiner's record, holds on a tenth as many others: first joins/s, status reads/s | ${int(hp.windowJoins.rate)}, ${int(hp.windowReads.rate)} | ${int(hp.joins.rate)}, ${int(hp.reads.rate)} the plain service above (not the floor) | ${f2(windowJoinRatio)}, ${f2(windowReadRatio)} | joins ≥ 0.9: ${met(windowJoinRatio >= 0.9)} |`,
    `| join p50 / p99 (ms) | ${f1(hp.joins.p50)} / ${f1(hp.joins.p99)} | ${f1(hp.floorJoins.p50)} / ${f1(hp.floorJoins.p99)} |  |  |`,
    `| Redis commands per join, scripts' own calls included | ${f1(hp.joins.redisCommands)} | ${f1(hp.floorJoins.redisCommands)} |  | ≤ 10: ${met(hp.joins.redisCommands <= 10)} |`,
    `| Redis commands / CPU (µs) per join, term with windows | ${f1(hp.windowJoins.redisCommands)} / ${f1(hp.windowJoins.redisCpuUs)} | ${f1(hp.joins.redisCommands)} / ${f1(hp.joins.redisCpuUs)} the plain service |  |  |`,
    `| Redis CPU per join (µs, INFO cpu) | ${f1(hp.joins.redisCpuUs)} | ${f1(hp.floorJoins.redisCpuUs)} |  | ≤ 15: ${met(hp.joins.redisCpuUs <= 15)} |`,
    `| Redis commands / CPU (µs) per status read | ${f1(hp.reads.redisCommands)} / ${f1(hp.reads.redisCpuUs)} | ${f1(hp.floorReads.redisCommands)} / ${f1(hp.floorReads.redisCpuUs)} |  |  |`,
    `| process CPU per join / per status read (µs) | ${f1(hp.joins.processCpuUs)} / ${f1(hp.reads.processCpuUs)} | ${f1(hp.floorJoins.processCpuUs)} / ${f1(hp.floorReads.processCpuUs)} |  |  |`,
    `| refused (not 2xx) joins / reads (term with windows) | ${hp.joins.refused} / ${hp.reads.refused} (${hp.windowJoins.refused} / ${hp.windowReads.refused}) | ${hp.floorJoins.refused} / ${hp.floorReads.refused} |  | 0 |`,
  ];
  const calls = (by) =>
    Object.entries(by)
      .map(([name, perRequest]) => `${name} ${perRequest.toFixed(2)}`)
      .join(', ');
  rows.push(
    '',
    `Redis calls per first join, by command (scripts' own calls included): ${calls(hp.joins.redisByCommand)}`,
    '',
    `Redis calls per status read, by command: ${calls(hp.reads.redisByCommand)}`,
  );
  const { joins, reads } = hp.profile;
  const parts = [...new Set([...joins.parts, ...reads.parts].map((p) => p.part))];
  const of = (phase, part) => phase.parts.find((p) => p.part === part);
  const cell = (phase, part) => {
    const p = of(phase, part);
    return p ? `${f1(p.usPerRequest)} | ${Math.round(p.share * 100)}%` : '0 | 0%';
  };
  parts.sort((a, b) => (of(joins, b)?.usPerRequest ?? 0) - (of(joins, a)?.usPerRequest ?? 0));
  const profile = [
    `Where the service's time goes (a third run under \`--cpu-prof\`, cut to each phase; idle is time the event loop waited):`,
    '',
    '| part of a request | join (µs) | share | status read (µs) | share |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...parts.map((part) => `| ${part} | ${cell(joins, part)} | ${cell(reads, part)} |`),
    `| all (wall time per request, one process) | ${f1(joins.sampledUsPerRequest)} | 100% | ${f1(reads.sampledUsPerRequest)} | 100% |`,
  ];
  return {
    table: [...rows, '', ...profile].join('\n'),
    ratios: {
      hotJoinsVsFloor: joinRatio,
      hotReadsVsFloor: readRatio,
      windowJoinsVsPlain: windowJoinRatio,
      windowReadsVsPlain: windowReadRatio,
    },
    ok: [hp.joins, hp.reads, hp.quietJoins, hp.quietReads, hp.windowJoins, hp.windowReads].every((x) => x.refused === 0), // prettier-ignore
  };
}

module.exports = { hotPathTable };
