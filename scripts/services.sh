#!/usr/bin/env bash
# Makes PostgreSQL and Redis reachable at DATABASE_URL and REDIS_URL (defaults as in API.md):
#   1. if they already answer, use them;
#   2. else, where a Docker engine runs, `docker compose up` the postgres and redis services
#      (or `docker-compose up`, Compose v1, where the v2 plugin is missing);
#   3. else start local postgres / redis-server binaries with data under $SERVICES_DATA_DIR
#      (default ./.data), for loopback URLs only;
#   4. else say exactly what to install.
# `bash scripts/services.sh stop` stops what step 3 started.
set -euo pipefail
cd "$(dirname "$0")/.."

# .env as the service itself reads it: real environment variables win (scripts/env-exports.js).
if [ -f .env ]; then eval "$(node scripts/env-exports.js .env)"; fi
DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/enroll}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
DATA_DIR=$(realpath -m "${SERVICES_DATA_DIR:-.data}")

# host and port of a URL like scheme://user:pass@host:port/db
url_host() { local h=${1#*://}; h=${h##*@}; h=${h%%/*}; h=${h%%\?*}; h=${h%:*}; echo "${h:-127.0.0.1}"; }
url_port() { local h=${1#*://}; h=${h##*@}; h=${h%%/*}; h=${h%%\?*}; [[ $h == *:* ]] && echo "${h##*:}" || echo "$2"; }
PG_HOST=$(url_host "$DATABASE_URL"); PG_PORT=$(url_port "$DATABASE_URL" 5432)
REDIS_HOST=$(url_host "$REDIS_URL"); REDIS_PORT=$(url_port "$REDIS_URL" 6379)

say() { echo "services: $*" >&2; }
answers() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
pg_up() {
  if command -v pg_isready >/dev/null; then pg_isready -q -h "$PG_HOST" -p "$PG_PORT"; else answers "$PG_HOST" "$PG_PORT"; fi
}
redis_up() { answers "$REDIS_HOST" "$REDIS_PORT"; }
is_loopback() { [[ $1 == 127.* || $1 == localhost || $1 == ::1 || $1 == '[::1]' ]]; }
wait_for() { for _ in $(seq 1 60); do "$1" && return 0; sleep 0.5; done; return 1; }

pg_bin() {
  local d
  if command -v pg_ctl >/dev/null && command -v initdb >/dev/null; then dirname "$(command -v pg_ctl)"; return; fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do [ -x "$d/pg_ctl" ] && { echo "$d"; return; }; done
  return 1
}
# PostgreSQL refuses to run as root; run it as the `postgres` user when we are root.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

start_local_postgres() {
  local bin; bin=$(pg_bin) || return 10
  local dir="$DATA_DIR/postgres"
  mkdir -p "$DATA_DIR"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chmod 755 "$DATA_DIR"; mkdir -p "$dir"; chown postgres "$dir"; chmod 700 "$dir"
  fi
  if [ ! -f "$dir/PG_VERSION" ]; then
    say "initialising a local PostgreSQL cluster in $dir"
    as_pg "$bin/initdb" -D "$dir" -U postgres --auth=trust >/dev/null
  fi
  say "starting local PostgreSQL on $PG_HOST:$PG_PORT"
  as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w \
    -o "-p $PG_PORT -c listen_addresses=$PG_HOST -k $dir" start >/dev/null
}

start_local_redis() {
  command -v redis-server >/dev/null || return 10
  mkdir -p "$DATA_DIR/redis"
  say "starting local Redis on $REDIS_HOST:$REDIS_PORT"
  redis-server --daemonize yes --bind "$REDIS_HOST" --port "$REDIS_PORT" --save '' --appendonly no \
    --dir "$DATA_DIR/redis" --logfile "$DATA_DIR/redis/redis.log" --pidfile "$DATA_DIR/redis/redis.pid" >/dev/null
}

stop_local() {
  local bin
  if [ -f "$DATA_DIR/postgres/postmaster.pid" ] && bin=$(pg_bin); then as_pg "$bin/pg_ctl" -D "$DATA_DIR/postgres" -m fast stop; fi
  if [ -f "$DATA_DIR/redis/redis.pid" ]; then kill "$(cat "$DATA_DIR/redis/redis.pid")" 2>/dev/null || true; rm -f "$DATA_DIR/redis/redis.pid"; fi
}

if [ "${1:-}" = stop ]; then stop_local; exit 0; fi

need=()
pg_up || need+=(postgres)
redis_up || need+=(redis)
[ ${#need[@]} -eq 0 ] && { say "PostgreSQL ($PG_HOST:$PG_PORT) and Redis ($REDIS_HOST:$REDIS_PORT) answer"; exit 0; }

# Compose v2 (`docker compose`) where the plugin is installed, else the v1 `docker-compose`.
compose() {
  if docker compose version >/dev/null 2>&1; then docker compose "$@"
  elif command -v docker-compose >/dev/null; then docker-compose "$@"
  else return 10; fi
}

if command -v docker >/dev/null && docker info >/dev/null 2>&1 && compose version >/dev/null 2>&1; then
  say "starting ${need[*]} with Docker Compose"
  # The compose file requires JWT_SECRET (for the app); the stores started here do not use it.
  export JWT_SECRET=${JWT_SECRET:-unused-by-postgres-and-redis}
  compose up -d "${need[@]}" # v1 has no --wait: the loops below wait for both
else
  for s in "${need[@]}"; do
    host_var=PG_HOST; [ "$s" = redis ] && host_var=REDIS_HOST
    if ! is_loopback "${!host_var}"; then
      say "$s at ${!host_var} does not answer, and it is not on this machine: start it there"; exit 1
    fi
    rc=0; "start_local_$s" || rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 10 ]; then say "starting a local $s failed (see the output above)"; exit 1; fi
    if [ $rc -eq 10 ]; then
      say "$s is not running and no way to start it was found. Install one of:"
      say "  - Docker with the compose plugin (then this script runs docker-compose.yml), or"
      say "  - the server itself: Debian/Ubuntu 'apt-get install postgresql redis-server',"
      say "    macOS 'brew install postgresql@15 redis'; or point DATABASE_URL / REDIS_URL at running servers"
      exit 1
    fi
  done
fi
wait_for pg_up || { say "PostgreSQL did not come up on $PG_HOST:$PG_PORT"; exit 1; }
wait_for redis_up || { say "Redis did not come up on $REDIS_HOST:$REDIS_PORT"; exit 1; }
say "PostgreSQL ($PG_HOST:$PG_PORT) and Redis ($REDIS_HOST:$REDIS_PORT) are up"
