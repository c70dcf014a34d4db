// The floors: a bare node:http server doing only the Redis work of a join (POST: ZADD NX +
// ZRANK, pipelined in one round trip) or of a status read (GET: ZRANK + ZCARD, likewise). No
// framework, no auth, no validation: what the service's join and status read could at best
// approach on this machine.
const http = require('node:http');
const Redis = require('ioredis');

// On the same Redis topology as the service: a cluster when REDIS_CLUSTER_NODES is set.
const keyPrefix = process.env.REDIS_KEY_PREFIX || '';
const redis = process.env.REDIS_CLUSTER_NODES
  ? new Redis.Cluster(
      process.env.REDIS_CLUSTER_NODES.split(',').map((hp) => ({
        host: hp.split(':')[0],
        port: Number(hp.split(':')[1]),
      })),
      { keyPrefix, enableAutoPipelining: true },
    )
  : new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379/0', { keyPrefix });
let seq = 0;

const server = http.createServer(async (req, res) => {
  const student = new URL(req.url, 'http://x').searchParams.get('s') || 'anon';
  try {
    if (req.method === 'GET') {
      const [[, rank], [, waiting]] = await redis
        .pipeline()
        .zrank('{floor}:queue', student)
        .zcard('{floor}:queue')
        .exec();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: rank === null ? 'NOT_QUEUED' : 'WAITING', position: rank + 1, waiting })); // prettier-ignore
      return;
    }
    const [[, added], [, rank]] = await redis
      .pipeline()
      .zadd('{floor}:queue', 'NX', ++seq, student)
      .zrank('{floor}:queue', student)
      .exec();
    res.writeHead(added ? 201 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'WAITING', position: rank + 1 }));
  } catch (err) {
    res.writeHead(503);
    res.end(JSON.stringify({ error: err.message }));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`ready http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => redis.quit().then(() => process.exit(0))));
