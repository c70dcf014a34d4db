import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

const MAIN = resolve(__dirname, '../../dist/src/main.js'); // scripts/test.sh builds it

export interface ServerProcess {
  proc: ChildProcess;
  output: () => string;
}

/**
 * The compiled server, as `npm start` runs it, with a clean environment of our choosing (and
 * node's own arguments, if any, before the script).
 */
export function startServer(env: Record<string, string>, nodeArgs: string[] = []): ServerProcess {
  const proc = spawn(process.execPath, [...nodeArgs, MAIN], {
    cwd: '/', // no .env is read from here
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d) => (out += d));
  proc.stderr?.on('data', (d) => (out += d));
  return { proc, output: () => out };
}

export async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts the compiled server and waits for its ready line; returns its URL too. */
export async function startedServer(
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ServerProcess & { url: string }> {
  const server = startServer(env, nodeArgs);
  const ready = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
  await waitFor(() => ready.test(server.output()), 20_000);
  return { ...server, url: ready.exec(server.output())![1] };
}
