// What an open Server-Sent Events connection costs a bare node:http server, with and without
// giving its HTTP parser back (the service's `releaseParser`, from dist/: `npm run build` first).
//
//   node bench/peers/parser-memory.js [connections]            # this Node
//   npx -p node@24.13 node bench/peers/parser-memory.js 5000    # another release, to compare
//
// For each way, a fresh server process holds `connections` streams opened 250 at a time by a
// client process, then prints malloc's resident heap ([heap] in /proc/self/smaps), RSS and V8's
// heap in use after a full collection, each less the same figures before the first connection.
const { spawn } = require('node:child_process');
const { readFileSync } = require('node:fs');
const http = require('node:http');
const { resolve } = require('node:path');

const [mode, arg] = process.argv.slice(2);
// The server and client processes are told N by their parent's environment.
const N = Number(
  process.env.PARSER_MEMORY_N || (mode !== 'serve' && mode !== 'client' && mode) || 5000,
);
const BATCH = 250;

function residentMb() {
  let heap = 0;
  let inHeap = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (mapping) inHeap = mapping[1] === '[heap]';
    const rss = inHeap && /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) heap += Number(rss[1]) / 1024;
  }
  global.gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { mallocMb: heap, rssMb: rss / 2 ** 20, heapUsedMb: heapUsed / 2 ** 20 };
}

/** The server: holds every stream, releasing its parser or not; prints one JSON line. */
function serve(release) {
  const releaseParser = release
    ? require(resolve(__dirname, '../../dist/src/live/parser-release.js'))
    : null;
  const held = [];
  const server = http.createServer((req, res) => {
    // As the service does: asked once the request has been read whole (a handler runs later).
    setImmediate(() => {
      const free = releaseParser?.canReleaseParser(res) ?? false;
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        connection: free ? 'close' : 'keep-alive',
      });
      if (free) releaseParser.releaseParser(res);
      res.write(': open\n\n');
      held.push(res);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const before = residentMb();
    const client = spawn(process.execPath, [__filename, 'client', String(server.address().port)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    client.stdout.once('data', () => {
      const after = residentMb();
      const per = (k) => Math.round(((after[k] - before[k]) * 2 ** 20) / N);
      const released = held.filter((r) => r.req.socket.parser === null).length;
      console.log(
        JSON.stringify({
          release,
          streams: held.length,
          released,
          mallocBytesPerStream: per('mallocMb'),
          rssBytesPerStream: per('rssMb'),
          heapBytesPerStream: per('heapUsedMb'),
        }),
      );
      client.kill();
      process.exit(0);
    });
  });
}

/** The client: opens N streams, BATCH at a time, each waiting for its first frame. */
async function client(port) {
  const open = () =>
    new Promise((ok) =>
      http.get({ host: '127.0.0.1', port, path: '/s', agent: false }, (res) =>
        res.once('data', ok),
      ),
    );
  for (let i = 0; i < N; i += BATCH) await Promise.all(Array.from({ length: BATCH }, open));
  process.stdout.write('open\n');
  setInterval(() => {}, 1000);
}

function run(release) {
  return new Promise((ok) => {
    const child = spawn(process.execPath, ['--expose-gc', __filename, 'serve', String(release)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, PARSER_MEMORY_N: String(N) },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', () => ok(JSON.parse(out)));
  });
}

if (mode === 'serve') serve(arg === 'true');
else if (mode === 'client') client(Number(arg));
else {
  (async () => {
    console.log(`node ${process.version}, ${N} streams`);
    for (const release of [false, true]) console.log(JSON.stringify(await run(release)));
  })();
}
