# Sourced (not run) by the set-up scripts: puts a supported Node.js first on the PATH.
#
# The floor is 22.12 (Node 20 reached its end of life in April 2026, and a dependency,
# content-disposition 3, needs 22). Where the machine's `node` is older, or NODE_MAJOR asks for
# another line, that line's latest release comes from the npm registry's `node` package (npx
# keeps it in its cache, so only the first run downloads it), and everything after — npm, the
# build, jest, the servers the tests start — runs on it.

node_meets_floor() {
  node -e 'const [a, b] = process.versions.node.split(".").map(Number);
           process.exit(a > 22 || (a === 22 && b >= 12) ? 0 : 1)' 2>/dev/null
}

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null; }

use_node_line() {
  local bin
  bin=$(npx -y -p "node@$1" -c 'dirname "$(command -v node)"') || {
    echo "node: could not fetch Node.js $1 from the npm registry; install Node.js 22.12 or later" >&2
    return 1
  }
  export PATH="$bin:$PATH"
}

if [ -n "${NODE_MAJOR:-}" ] && [ "$(node_major)" != "$NODE_MAJOR" ]; then
  use_node_line "$NODE_MAJOR" || exit 1
elif ! node_meets_floor; then
  echo "node: $(node -v 2>/dev/null || echo 'no node') is below the floor (22.12); using Node.js 24 from the npm registry" >&2
  use_node_line 24 || exit 1
fi
node_meets_floor || { echo "node: $(node -v) is below the floor (22.12)" >&2; exit 1; }
