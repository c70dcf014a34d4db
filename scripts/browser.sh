#!/usr/bin/env bash
# Makes a Chromium available for the browser tests and prints its path (CHROMIUM_PATH, else
# chromium on the PATH, else Debian's `chromium` installed as root; never skipped).
exec bash "$(dirname "$0")/find-tool.sh" CHROMIUM_PATH chromium chromium chromium-browser
