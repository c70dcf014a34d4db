#!/usr/bin/env bash
# The README's Quick start, command 1, exactly as a newcomer runs it on a clean clone: `npm run up`
# (writes .env, brings up the stores, builds, serves). Waits until it serves, checks /health,
# then stops it with SIGTERM, as an operator would. `npm test` (command 2) runs after it, with
# the .env it wrote in place. Real environment variables win over .env, so the run gets a port
# the OS picks (this machine may serve something on 3000), a database and a key prefix of its
# own, dropped afterwards: it touches no data it did not create.
set -euo pipefail
cd "$(dirname "$0")/.."
run=ci_quickstart_$$_$(date +%s)
export PORT=0
export DATABASE_URL=postgres://postgres@127.0.0.1:5432/$run
export REDIS_KEY_PREFIX="$run:"
log=$(mktemp)
setsid npm run up >"$log" 2>&1 &
group=$!
stop() {
  kill -TERM -- "-$group" 2>/dev/null || true
  wait "$group" 2>/dev/null || true
  node -e '
    const { Client } = require("pg");
    const Redis = require("ioredis");
    (async () => {
      const pg = new Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres" });
      await pg.connect();
      await pg.query(`DROP DATABASE IF EXISTS ${process.argv[1]} WITH (FORCE)`);
      await pg.end();
      const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379/0");
      const keys = await redis.keys(`${process.argv[1]}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    })().catch((err) => { console.error(`quick start clean-up: ${err.message}`); process.exit(1); });
  ' "$run" || true
}
trap stop EXIT
url=
for _ in $(seq 1 600); do
  url=$(sed -n 's/.*ready: listening on \(http:\/\/[0-9.:]*\).*/\1/p' "$log" | head -n 1)
  [ -n "$url" ] && break
  kill -0 "$group" 2>/dev/null || { cat "$log"; echo "quick start: npm run up exited" >&2; exit 1; }
  sleep 0.5
done
[ -n "$url" ] || { cat "$log"; echo "quick start: npm run up did not serve within 300 s" >&2; exit 1; }
health=$(curl -fsS "$url/health") || { cat "$log"; echo "quick start: $url/health failed" >&2; exit 1; }
echo "quick start: npm run up served $url; /health: $health"
[ -f .env ] || { echo "quick start: npm run up wrote no .env" >&2; exit 1; }
