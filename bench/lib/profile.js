// Where the service's CPU goes during one phase: a V8 CPU profile (`node --cpu-prof`) cut to
// the phase's time window, each sample charged to the part of a request it was spent in.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * The parts of a request, tried from the sampled function outwards: the innermost frame that
 * matches one decides. Node's own frames (crypto, streams) match nothing and pass the sample
 * on to their caller, so an HMAC is charged to whoever asked for it.
 */
const PARTS = [
  ['token check', /node_modules\/(jsonwebtoken|jws|jwa|@nestjs\/jwt)\/|dist\/src\/auth\/token-verifier/],
  ['rate limit', /node_modules\/rate-limiter-flexible\/|dist\/src\/ratelimit\//],
  ['access log line', /node_modules\/(pino|sonic-boom|thread-stream|fast-redact|quick-format-unescaped|on-exit-leak-free|pino-std-serializers)\/|dist\/src\/logging\//],
  ['metrics', /node_modules\/prom-client\/|dist\/src\/metrics\//],
  ['caches (lru-cache)', /node_modules\/lru-cache\//],
  ['Redis client (ioredis)', /node_modules\/(ioredis|redis-parser|denque|cluster-key-slot|standard-as-callback|redis-errors|@ioredis)\//],
  ['pre-queue member (HMAC)', /dist\/src\/fairness\/draw-seeds/],
  ['lecture facts', /dist\/src\/lectures\//],
  ['announcement (news)', /dist\/src\/news\//],
  ['join (queue service, line store)', /dist\/src\/(queue|line|plans)\//],
  ['Nest routing, guards, pipes', /node_modules\/(@nestjs\/core|@nestjs\/common|rxjs|class-transformer|class-validator|reflect-metadata)\/|dist\/src\/(auth|common)\//],
  ['access log and metrics hook', /dist\/src\/app\.factory/],
  ['Fastify (routing, reply)', /node_modules\/(fastify|find-my-way|@fastify|fast-json-stringify|fast-querystring|avvio|light-my-request|process-warning|toad-cache|abstract-logging)\//],
  ['Node http, sockets, promise ticks', /^node:(_http|net|internal\/(stream|http|net|streams|timers|process\/task_queues))|^node:events/],
  ['the rest of the service', /dist\/src\//],
]; // prettier-ignore
const BY_NAME = new Map([
  ['(garbage collector)', 'garbage collection'],
  ['(idle)', 'idle (waiting for Redis, the client)'],
  ['(program)', 'V8 and native code (unattributed)'],
]);

/** The newest .cpuprofile in `dir`. */
function newestProfile(dir) {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  if (files.length === 0) throw new Error(`no CPU profile was written in ${dir}`);
  return JSON.parse(readFileSync(join(dir, files[files.length - 1]), 'utf8'));
}

/**
 * Time per part within [fromUs, toUs] (the monotonic clock the profile's timestamps use, as
 * process.hrtime gives it), in µs, and the window's sampled total.
 */
function partsOf(profile, fromUs, toUs) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const partOfNode = new Map();
  const partOf = (id) => {
    if (partOfNode.has(id)) return partOfNode.get(id);
    const leaf = byId.get(id).callFrame;
    let part = BY_NAME.get(leaf.functionName);
    for (let at = id; !part && at !== undefined; at = parent.get(at)) {
      const url = byId.get(at).callFrame.url;
      part = url && PARTS.find(([, re]) => re.test(url))?.[0];
    }
    part ||= 'other (Node and V8 internals)';
    partOfNode.set(id, part);
    return part;
  };
  const us = {};
  let total = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i];
    if (t < fromUs || t > toUs) return;
    // A sample stands for the time until the next one.
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const part = partOf(id);
    us[part] = (us[part] ?? 0) + dt;
    total += dt;
  });
  return { us, total };
}

/** Monotonic µs now, on the clock V8's profiler stamps its samples with. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

module.exports = { newestProfile, partsOf, monotonicUs, PARTS, BY_NAME };
