#!/usr/bin/env bash
# A local Redis Cluster for the tests and the bench, from the redis-server binaries:
#   scripts/redis-cluster.sh start <dir>   3 masters + 3 replicas on free loopback ports, no
#                                          persistence, a short node timeout; prints the seeds
#                                          (host:port,...) once every slot is served
#   scripts/redis-cluster.sh stop <dir>    stops them and removes <dir>
#   scripts/redis-cluster.sh restart <dir> stops every node and makes a new, empty cluster on
#                                          the same ports (a whole-cluster restart without
#                                          persistence: everything it held is gone)
#   scripts/redis-cluster.sh restart-node <dir> <port>
#                                          SIGKILLs one node and starts it again in place, with
#                                          its node file and whatever dump.rdb a SAVE left in
#                                          its directory (a restart from a persistence file)
# Everything lives under <dir> (configs, node files, logs, pids), so runs never share state.
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?a directory of its own}
NODES=6
NODE_TIMEOUT_MS=${REDIS_CLUSTER_NODE_TIMEOUT_MS:-1000}

say() { echo "redis-cluster: $*" >&2; }
free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# One node of the cluster on port $1, its files under $dir/$1.
start_node() {
  local p=$1
  redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes \
    --cluster-config-file "$dir/$p/nodes.conf" --cluster-node-timeout "$NODE_TIMEOUT_MS" \
    --cluster-replica-validity-factor 0 \
    --save '' --appendonly no --dir "$dir/$p" --logfile "$dir/$p/redis.log" \
    --pidfile "$dir/$p/redis.pid" --daemonize yes >/dev/null 9>&- # not the lock (below)
  for _ in $(seq 1 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
}

# Test files running side by side may each start or restart a cluster: one at a time frees,
# picks and binds its ports, so that two never both find the same ports free. Held until this
# script exits; the nodes it starts do not inherit it.
take_port_lock() {
  command -v flock >/dev/null || return 0
  exec 9>"${TMPDIR:-/tmp}/enroll-redis-cluster.lock"
  flock 9
}

start() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || {
    say "redis-server and redis-cli are needed (Debian/Ubuntu: apt-get install redis-server)"; exit 1; }
  mkdir -p "$dir"
  local base ports=() tries=0
  [ -f "$dir/ports" ] && mapfile -t ports <"$dir/ports" # restart: the same ports
  # Each node needs its port and its cluster bus port (port + 10000) free.
  while [ ${#ports[@]} -lt $NODES ]; do
    tries=$((tries + 1)); [ $tries -gt 50 ] && { say "no free ports found"; exit 1; }
    # Ports and bus ports below the kernel's ephemeral range (32768 up), which outgoing
    # connections take without listening, so a free-looking bus port is really free.
    base=$((20000 + RANDOM % 2700)); ports=()
    for i in $(seq 0 $((NODES - 1))); do
      p=$((base + i)); free $p && free $((p + 10000)) || { ports=(); break; }
      ports+=("$p")
    done
  done
  # validity factor 0: a replica always stands for election when its master fails, even one
  # whose sync had not finished (a cluster killed seconds after it was made, in the tests).
  for p in "${ports[@]}"; do
    rm -rf "${dir:?}/$p"; mkdir -p "$dir/$p"
    start_node "$p"
  done
  redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-replicas 1 \
    --cluster-yes >"$dir/create.log" 2>&1 || { say "cluster create failed: see $dir/create.log"; exit 1; }
  for p in "${ports[@]}"; do
    for _ in $(seq 1 100); do
      redis-cli -p "$p" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break; sleep 0.1
    done
  done
  printf '%s\n' "${ports[@]}" >"$dir/ports"
  (IFS=,; echo "${ports[*]/#/127.0.0.1:}")
}

kill_nodes() {
  for pid in "$dir"/*/redis.pid; do [ -f "$pid" ] && kill -9 "$(cat "$pid")" 2>/dev/null || true; done
  for p in $(cat "$dir/ports" 2>/dev/null); do
    for _ in $(seq 1 50); do free "$p" && break; sleep 0.1; done
  done
}

restart_node() {
  local p=${1:?the port of a node}
  [ -f "$dir/$p/redis.pid" ] || { say "no node on port $p in $dir"; exit 1; }
  kill -9 "$(cat "$dir/$p/redis.pid")" 2>/dev/null || true
  for _ in $(seq 1 50); do free "$p" && break; sleep 0.1; done
  start_node "$p"
}

stop() {
  [ -d "$dir" ] || return 0
  kill_nodes
  rm -rf "$dir"
}

case $cmd in
  start) take_port_lock; start ;;
  stop) stop ;;
  restart) take_port_lock; kill_nodes; start ;;
  restart-node) take_port_lock; restart_node "${3:-}" ;;
  *) say "usage: $0 start|stop|restart <dir> | restart-node <dir> <port>"; exit 2 ;;
esac
