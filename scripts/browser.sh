#!/usr/bin/env bash
# Makes a Chromium available for the browser tests and prints its path:
#   1. CHROMIUM_PATH if set (and executable);
#   2. else chromium (or chromium-browser) on the PATH;
#   3. else, as root where apt-get exists, install Debian's `chromium`;
#   4. else stop, saying exactly what to install. The browser tests are never skipped.
set -euo pipefail

say() { echo "browser: $*" >&2; }
found() { command -v chromium || command -v chromium-browser || true; }

if [ -n "${CHROMIUM_PATH:-}" ]; then
  [ -x "$CHROMIUM_PATH" ] || { say "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable"; exit 1; }
  echo "$CHROMIUM_PATH"; exit 0
fi
path=$(found)
if [ -z "$path" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "installing Debian's chromium (apt-get install -y chromium)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >&2
  path=$(found)
fi
if [ -z "$path" ]; then
  say "no Chromium found. Install it (Debian/Ubuntu: sudo apt-get install -y chromium) or set CHROMIUM_PATH."
  exit 1
fi
echo "$path"
