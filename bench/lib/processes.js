// Starting and stopping the processes a bench run needs, each bounded in time.
const { spawn } = require('node:child_process');
const { readFileSync, readdirSync, writeFileSync } = require('node:fs');

// The servers this run started and has not stopped. A bench killed from outside (the smoke
// test's timeout sends SIGTERM) must not leave them serving: they are SIGKILLed as it exits.
const live = new Set();
const killAll = () => {
  for (const proc of live) proc.kill('SIGKILL');
};
process.on('exit', killAll);

/**
 * Spawns a node server and resolves once a line matches `ready` (its first group: the URL).
 * `nodeArgs` go to node itself (the hot path's `--cpu-prof`).
 */
function startNode(script, env, readyLine, label, nodeArgs = []) {
  return new Promise((resolve, reject) => {
    // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles every server; last,
    // so it also overrides the service's own (`--max-old-space-size=0`: V8's default).
    const args = [...nodeArgs, ...(process.env.BENCH_NODE_ARGS || '').split(' ').filter(Boolean)];
    const proc = spawn(process.execPath, [...args, script], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    // Keep only the tail of a chatty server's output (one log line per request), as chunks:
    // gluing every chunk onto a 256 KB string cost the load generator CPU during a stampede.
    const TAIL = 256 * 1024;
    const chunks = [];
    let kept = 0;
    const out = () => chunks.join('').slice(-TAIL);
    let ready = false;
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${label} did not start within 30 s:\n${out()}`));
    }, 30_000);
    const onData = (d) => {
      chunks.push(String(d));
      kept += d.length;
      while (kept - chunks[0].length >= TAIL) kept -= chunks.shift().length;
      const m = !ready && readyLine.exec(out());
      if (m) {
        ready = true;
        clearTimeout(timer);
        const save = () =>
          process.env.BENCH_LOG_DIR &&
          writeFileSync(`${process.env.BENCH_LOG_DIR}/${label}-${proc.pid}.log`, out());
        resolve({ proc, url: m[1], output: out, stop: () => stop(proc).finally(save) });
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}:\n${out()}`));
    });
  });
}

/** SIGTERM, then SIGKILL after 10 s; resolves with the exit code. */
function stop(proc) {
  if (proc.exitCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((resolve) => {
    const killer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    proc.removeAllListeners('exit');
    proc.on('exit', (code) => {
      clearTimeout(killer);
      resolve(code);
    });
    proc.kill('SIGTERM');
  });
}

/** Peak resident set size (VmHWM) of a live process, in MB. */
const peakRssMb = (pid) => statusMb(pid, 'VmHWM');
/** Resident set size now (VmRSS) of a live process, in MB. */
const rssMb = (pid) => statusMb(pid, 'VmRSS');

/**
 * Of RSS, what the process has freed with MADV_FREE (V8 and malloc give pages back that way):
 * counted until the kernel needs the memory, and then taken at once.
 */
function lazyFreeMb(pid) {
  try {
    const m = /LazyFree:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

function statusMb(pid, field) {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a live process has used so far; null once it is gone. */
function cpuSeconds(pid) {
  try {
    // Fields 14 and 15 of /proc/<pid>/stat, after the command name in parentheses; in ticks.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * The machine's CPU seconds so far, busy (not idle nor waiting for I/O), stolen by the
 * hypervisor for other guests (counted in busy), and all, over every core.
 */
function machineCpuSeconds() {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const n = ticks.slice(0, 8).map(Number); // user nice system idle iowait irq softirq steal
  const all = n.reduce((a, b) => a + b, 0);
  return { busy: (all - n[3] - n[4]) / 100, steal: n[7] / 100, all: all / 100 };
}

/**
 * CPU seconds used so far by the processes whose command name is `comm` (e.g. postgres), with
 * the children they have reaped: PostgreSQL's postmaster reaps every backend that exits (a pool
 * closing an idle connection), so their seconds stay counted. Null when none runs here.
 */
function commandCpuSeconds(comm) {
  let seconds = null;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== comm) continue;
      // Fields 14–17 after the name: utime, stime, cutime, cstime; in ticks.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds = (seconds ?? 0) + (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100; // prettier-ignore
    } catch {
      // Gone between the listing and the read: reaped, its seconds are its parent's now.
    }
  }
  return seconds;
}

module.exports = { startNode, stop, killAll, peakRssMb, rssMb, lazyFreeMb, cpuSeconds, commandCpuSeconds, machineCpuSeconds }; // prettier-ignore
