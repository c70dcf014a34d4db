// Thousands of students waiting on live streams while the queue moves: what the streams cost
// the service (memory) and Redis (commands per second for their position updates).
const stores = require('../lib/stores');
const { openStream } = require('../lib/sse');
const { now, percentile, sleep } = require('../lib/load');

const OPEN_IN_CHUNKS_OF = 250; // the listen backlog would drop a burst of thousands of connects
const HOLD_MS = 6000;
const HEAD_LEAVES_EVERY_MS = 200;
/** Admissions pushed to open streams afterwards: each ticket holder in turn hands it on. */
const HANDOVERS = 50;
const TICKET_TTL_S = 600;

async function openStreams(api, admin, { token, streams, createLecture, redisUrl }) {
  // One held ticket and everyone else waiting: positions move only as the head leaves.
  const lecture = await createLecture(api, admin, {
    capacity: streams + 10,
    admission: { maxActiveTickets: 1, ticketTtlSeconds: TICKET_TTL_S },
  });
  const students = Array.from({ length: streams + 1 }, (_, i) => ({
    id: `live${i}`,
    token: token(`live${i}`),
    events: 0,
  }));
  for (const s of students) await api.request('POST', `/lectures/${lecture.id}/queue`, s.token);
  const waiting = students.slice(1);

  const open = [];
  for (let i = 0; i < waiting.length; i += OPEN_IN_CHUNKS_OF) {
    const chunk = waiting.slice(i, i + OPEN_IN_CHUNKS_OF);
    open.push(
      ...(await Promise.all(
        chunk.map(async (s) => {
          let first;
          const seen = new Promise((r) => (first = r));
          const stream = await openStream(
            api.url,
            `/lectures/${lecture.id}/queue/events`,
            s.token,
            (event, data) => {
              s.events += 1;
              if (data.status === 'ADMITTED' && !s.receivedAt) {
                s.receivedAt = Date.now(); // wall clock, as the grant instant is
                s.grantedAt = Date.parse(data.ticketExpiresAt) - TICKET_TTL_S * 1000;
              }
              first();
            },
          );
          if (stream.status === 200) await Promise.race([seen, sleep(5000)]);
          return stream;
        }),
      )),
    );
  }
  const opened = open.filter((s) => s.status === 200).length;

  const events0 = waiting.reduce((n, s) => n + s.events, 0);
  const redis0 = await stores.redisCommands(redisUrl);
  const t0 = now();
  let leaves = 0;
  while (now() - t0 < HOLD_MS) {
    await api.request('DELETE', `/lectures/${lecture.id}/queue`, waiting[leaves].token);
    leaves += 1;
    await sleep(HEAD_LEAVES_EVERY_MS);
  }
  const seconds = (now() - t0) / 1000;
  const redisPerSecond = ((await stores.redisCommands(redisUrl)) - redis0) / seconds;
  const updates = waiting.reduce((n, s) => n + s.events, 0) - events0;

  // With every stream still open: the ticket holder gives the ticket back, the next student is
  // admitted by the event and the news pushed to their stream; that student hands it on, and
  // so on. Granted → received, as the student's stream delivers it.
  let holder = students[0];
  const pushMs = [];
  for (let i = leaves; i < Math.min(waiting.length, leaves + HANDOVERS); i++) {
    await api.request('DELETE', `/lectures/${lecture.id}/queue`, holder.token);
    const next = waiting[i];
    const deadline = now() + 2000;
    while (!next.receivedAt && now() < deadline) await sleep(5);
    if (next.receivedAt) pushMs.push(next.receivedAt - next.grantedAt);
    holder = next;
  }
  open.forEach((s) => s.close());
  return {
    streams: opened,
    seconds,
    headLeaves: leaves,
    redisCommandsPerSecond: redisPerSecond,
    updatesPerStreamPerSecond: updates / opened / seconds,
    push: {
      p50: percentile(pushMs, 50),
      p99: percentile(pushMs, 99),
      max: percentile(pushMs, 100),
      count: pushMs.length,
      asked: HANDOVERS,
    },
  };
}

module.exports = { openStreams };
