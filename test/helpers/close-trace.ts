import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ModulesContainer } from '@nestjs/core';
import type { Server } from 'node:http';
import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';

const HOOKS = ['onModuleDestroy', 'beforeApplicationShutdown', 'onApplicationShutdown'] as const;
const PHASES = [
  'close',
  'callDestroyHook',
  'callBeforeShutdownHook',
  'dispose',
  'callShutdownHook',
] as const;

type Callable = (...args: unknown[]) => unknown;

/**
 * Follows one app's close(): which of Nest's phases began and ended, which lifecycle hooks of
 * which providers are still running, and where Fastify's own close is. An afterAll's close
 * that never finished (seen in CI, about one run in forty) is then named, not guessed at.
 * Installed between createApp and listen: Fastify takes no hooks once listening.
 */
export class CloseTrace {
  private readonly running = new Map<string, number>();
  private readonly steps: string[] = [];
  /** the pool's connections now checked out, with where each was asked for */
  private readonly checkedOut = new Map<PoolClient, { taken: Error; force: () => void }>();
  private readonly pool: Pool;
  /** when close() was first called: the steps' times count from it */
  private startedAt = 0;

  constructor(private readonly app: NestFastifyApplication) {
    const wrapped = new WeakSet<object>();
    for (const mod of app.get(ModulesContainer).values()) {
      const wrappers = [...mod.providers.values(), ...mod.controllers.values(), ...mod.injectables.values()]; // prettier-ignore
      for (const wrapper of wrappers) {
        const instance = wrapper.instance as object | undefined;
        if (!instance || typeof instance !== 'object' || wrapped.has(instance)) continue;
        wrapped.add(instance);
        for (const hook of HOOKS) this.follow(instance, hook, `${mod.name}/${String(wrapper.name)}.${hook}`); // prettier-ignore
      }
    }
    for (const phase of PHASES) this.follow(app, phase, `app.${phase}`, true);
    const fastify = app.getHttpAdapter().getInstance();
    fastify.addHook('preClose', (done) => {
      this.step('fastify preClose');
      done();
    });
    fastify.addHook('onClose', (_instance, done) => {
      this.step('fastify onClose');
      done();
    });
    (app.getHttpServer() as Server).once('close', () => this.step('http server closed'));
    this.pool = (app.get(DataSource).driver as unknown as { master: Pool }).master;
    this.followCheckouts();
  }

  /**
   * Where each pooled connection still checked out was taken: the pool's end() (TypeORM's
   * shutdown) waits for every one to come back.
   */
  private followCheckouts(): void {
    const pool = this.pool as unknown as { connect: Callable };
    const connect = methodOf(pool, 'connect')!;
    type Done = (err?: Error | boolean) => void;
    // The owner gets a release that does nothing once releaseCheckedOut() has handed the
    // connection back: its own release, later, must not throw "already released" into a test.
    const taken = (client: PoolClient, where: Error): Done => {
      const own = client.release.bind(client) as Done;
      let forced = false;
      const guarded: Done = (err) => (forced ? undefined : own(err));
      client.release = guarded;
      const force = () => {
        forced = true;
        own(new Error('checked out and never released (TestContext.close)'));
      };
      this.checkedOut.set(client, { taken: where, force });
      return guarded;
    };
    Object.defineProperty(pool, 'connect', {
      configurable: true,
      writable: true,
      value: function (this: unknown, cb?: (err: Error, client?: PoolClient, done?: Done) => void) {
        const where = new Error(); // its stack is formatted only if a report asks for it
        if (cb) return connect.call(this, (err: Error, client?: PoolClient, done?: Done) => cb(err, client, client ? taken(client, where) : done)); // prettier-ignore
        return (connect.call(this) as Promise<PoolClient>).then((client) => (taken(client, where), client)); // prettier-ignore
      },
    });
    this.pool.on('release', (_err: Error, client: PoolClient) => this.checkedOut.delete(client));
  }

  /**
   * Hands back, as broken, every pooled connection still checked out: the pool's end() can
   * then finish, and the close with it. Only for a close already reported as stuck.
   */
  releaseCheckedOut(): void {
    for (const { force } of [...this.checkedOut.values()]) force();
  }

  report(): {
    steps: string[];
    running: string[];
    listening: boolean;
    pool: Record<string, unknown>;
  } {
    const server = this.app.getHttpServer() as Server;
    const now = Date.now();
    const running = [...this.running].map(([label, since]) => `${label} (${now - since} ms)`);
    const p = this.pool as unknown as { _clients: unknown[]; _idle: unknown[]; _pendingQueue: unknown[]; ending: boolean; ended: boolean }; // prettier-ignore
    const pool = {
      clients: p._clients.length,
      idle: p._idle.length,
      waiting: p._pendingQueue.length,
      ending: p.ending,
      ended: p.ended,
      checkedOutAt: [...this.checkedOut.values()].map((c) => ourFrames(c.taken.stack)),
    };
    return { steps: this.steps, running, listening: server.listening, pool };
  }

  private step(what: string): void {
    this.steps.push(`${what} +${Date.now() - this.startedAt} ms`);
  }

  private async timed(
    isClose: boolean,
    label: string,
    asStep: boolean,
    call: () => unknown,
  ): Promise<unknown> {
    if (isClose && this.startedAt === 0) this.startedAt = Date.now();
    if (asStep) this.step(`${label} began`);
    this.running.set(label, Date.now());
    try {
      return await call();
    } finally {
      this.running.delete(label);
      if (asStep) this.step(`${label} ended`);
    }
  }

  /**
   * Wraps one method in place. Defined, not assigned: Nest's app is a Proxy whose set trap
   * does not set; and the original is read from the prototype chain, not through the Proxy
   * (whose wrapper would call back into ours).
   */
  private follow(target: object, name: string, label: string, asStep = false): void {
    const original = methodOf(target, name);
    if (!original) return;
    const run = (thisArg: unknown, args: unknown[]): Promise<unknown> =>
      this.timed(name === 'close', label, asStep, () => original.apply(thisArg, args));
    const followed = function (this: unknown, ...args: unknown[]): Promise<unknown> {
      return run(this, args);
    };
    try {
      Object.defineProperty(target, name, { value: followed, writable: true, configurable: true });
    } catch {
      // a frozen provider: its hook is not followed, and the app still starts
    }
  }
}

/** A stack's frames in this project's code (not node_modules), joined on one line. */
function ourFrames(stack = ''): string {
  return stack
    .split('\n')
    .slice(1)
    .filter(
      (l) => !l.includes('node_modules') && !l.includes('node:') && !l.includes('close-trace'),
    )
    .map((l) => l.trim().replace(/^at /, ''))
    .slice(0, 6)
    .join(' < ');
}

function methodOf(target: object, name: string): Callable | undefined {
  for (let o: object | null = target; o; o = Object.getPrototypeOf(o)) {
    const value = Object.getOwnPropertyDescriptor(o, name)?.value as unknown;
    if (typeof value === 'function') return value as Callable;
  }
  return undefined;
}
