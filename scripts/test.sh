#!/usr/bin/env bash
# Quick start, command 2: install, make PostgreSQL and Redis reachable, build, run every test.
# Tests make their own databases and Redis key prefixes; they never touch data they did not create.
# The suites that depend on Redis's topology run twice: on the standalone Redis, then on a local
# Redis Cluster (3 masters, 3 replicas) this script starts and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node.sh # a supported Node.js first on the PATH (fetched where the machine's is older)
[ -d node_modules ] || npm ci
bash scripts/services.sh
CHROMIUM_PATH=$(bash scripts/browser.sh) # the browser tests drive the pages in Chromium
export CHROMIUM_PATH
PROMTOOL_PATH=$(bash scripts/find-tool.sh PROMTOOL_PATH prometheus promtool) # checks /metrics
export PROMTOOL_PATH
# The start-up and browser tests run the compiled server, as `npm start` does (TEST_NO_BUILD=1:
# dist/ is already built from these sources, as in CI's second run).
[ "${TEST_NO_BUILD:-0}" = 1 ] || npm run build >/dev/null

# TEST_CLUSTER=0: the standalone Redis alone (CI's run on a second Node needs no second topology).
with_cluster=${TEST_CLUSTER:-1}
if [ "$with_cluster" != 0 ]; then
  cluster_dir=$(mktemp -d "${TMPDIR:-/tmp}/enroll-cluster.XXXXXX")
  trap 'bash scripts/redis-cluster.sh stop "$cluster_dir"' EXIT
  # A 5 s node timeout for this shared cluster (the script's default is 1 s, which the fault
  # tests' own clusters keep): with two files at once on two cores, a node starved for a second
  # must not be failed over under both of them.
  TEST_REDIS_CLUSTER_NODES=$(REDIS_CLUSTER_NODE_TIMEOUT_MS=5000 bash scripts/redis-cluster.sh start "$cluster_dir")
  export TEST_REDIS_CLUSTER_NODES
fi

# Two files at a time (TEST_WORKERS): each has its own database and key prefix, and most of a
# file's time is spent waiting on timers, servers and browsers, not on a core.
workers=${TEST_WORKERS:-2}
# Jest force-exits a worker that a leaked socket or timer keeps alive and only warns: here that
# fails the run, as a hung run in band would have. Jest waits 3 s for a worker to exit
# (workerGracefulExitTimeout in package.json), not its default 0.5 s: after a run of e2e files a
# worker holding no timer, socket or request (probed every 100 ms) still took longer than 0.5 s
# to exit on some machines (2026-12-07, on d0b166a too); a leak that outlives its file by 3 s
# still fails the run.
jest_run() {
  local log status=0
  log=$(mktemp)
  npx jest --maxWorkers="$workers" "$@" 2>&1 | tee "$log" || status=$?
  if grep -q 'failed to exit gracefully' "$log"; then
    echo "npm test: a test file left a socket or a timer open (jest force-exited its worker)" >&2
    status=1
  fi
  rm -f "$log"
  return "$status"
}
# Everything on the standalone Redis (files named on the command line, or all of them) ...
jest_run "$@"
# ... then the queue, enroll, admission, live-queue, fair-opening and stampede suites on the
# cluster, unless only other files were asked for.
CLUSTER_SUITES='test/e2e/(queue|auto-enroll-clearance|queue-concurrency|queue-order-fence|enroll|holds|admission-modes|ticket-expiry|crash-recovery|live-queue|live-stream-lifecycle|term-stream|plan|fair-opening|draw-every-lecture|stampede|catalog|registration)\.spec\.ts$'
if [ $# -eq 0 ]; then
  on_cluster=("$CLUSTER_SUITES")
else
  mapfile -t on_cluster < <(printf '%s\n' "$@" | grep -E "$CLUSTER_SUITES" || true)
fi
if [ "$with_cluster" != 0 ] && [ ${#on_cluster[@]} -gt 0 ]; then
  echo "--- the same suites on a Redis Cluster ($TEST_REDIS_CLUSTER_NODES)"
  TEST_REDIS_TOPOLOGY=cluster jest_run "${on_cluster[@]}"
fi
