#!/usr/bin/env bash
# Quick start, command 1: install, make PostgreSQL and Redis reachable, build, run the service.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node.sh # a supported Node.js first on the PATH (fetched where the machine's is older)
[ -d node_modules ] || npm ci
if [ ! -f .env ]; then
  # A development secret, made once per clone; production sets JWT_SECRET itself.
  secret=$(node -e "process.stdout.write(require('crypto').randomBytes(32).toString('hex'))")
  sed "s/^JWT_SECRET=.*/JWT_SECRET=$secret/" .env.example > .env
  echo "up: wrote .env with a fresh development JWT_SECRET" >&2
fi
bash scripts/services.sh
npm run build
exec npm start
