import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import Redis from 'ioredis';

/** A free loopback port, as the OS hands one out. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A throw-away redis-server of the test's own on a free loopback port, without persistence:
 * for faults that must not touch the shared server (out of memory, a read-only replica).
 */
export class RedisServer {
  private constructor(
    private readonly proc: ChildProcess,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  static async start(...args: string[]): Promise<RedisServer> {
    const port = await freePort();
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args],
      { stdio: 'ignore' },
    );
    const server = new RedisServer(proc, port);
    const client = server.client();
    try {
      for (let i = 0; ; i++) {
        try {
          await client.ping();
          return server;
        } catch (err) {
          if (i > 100) throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    } finally {
      client.disconnect();
    }
  }

  client(): Redis {
    return new Redis(this.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGKILL');
    await exited;
  }
}
