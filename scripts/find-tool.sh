#!/usr/bin/env bash
# Makes a tool the tests need available and prints its path:
#   scripts/find-tool.sh <ENV_VAR> <debian-package> <command> [<command>...]
#   1. $ENV_VAR if set (and executable);
#   2. else the first <command> on the PATH;
#   3. else, as root where apt-get exists, install the Debian package;
#   4. else stop, saying exactly what to install. The tests that need it are never skipped.
set -euo pipefail
var=$1 package=$2
shift 2

say() { echo "$package: $*" >&2; }
found() { for c in "$@"; do command -v "$c" && return; done; true; }

if [ -n "${!var:-}" ]; then
  [ -x "${!var}" ] || { say "$var=${!var} is not an executable"; exit 1; }
  echo "${!var}"; exit 0
fi
path=$(found "$@")
if [ -z "$path" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "installing Debian's $package (apt-get install -y $package)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package"; } >&2
  path=$(found "$@")
fi
if [ -z "$path" ]; then
  say "not found. Install it (Debian/Ubuntu: sudo apt-get install -y $package) or set $var."
  exit 1
fi
echo "$path"
