#!/usr/bin/env bash
# Quick start, command 2: install, make PostgreSQL and Redis reachable, build, run every test.
# Tests make their own databases and Redis key prefixes; they never touch data they did not create.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci
bash scripts/services.sh
CHROMIUM_PATH=$(bash scripts/browser.sh) # the browser tests drive the pages in Chromium
export CHROMIUM_PATH
PROMTOOL_PATH=$(bash scripts/find-tool.sh PROMTOOL_PATH prometheus promtool) # checks /metrics
export PROMTOOL_PATH
npm run build >/dev/null # the start-up and browser tests run the compiled server, as `npm start` does
exec npx jest --runInBand "$@"
