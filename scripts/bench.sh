#!/usr/bin/env bash
# npm run bench: the benchmark on the Node.js the service supports (scripts/node.sh), never the
# machine's older one, so that its figures are the service's as it is run.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node.sh
exec node bench/stampede.js "$@"
