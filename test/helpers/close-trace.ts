import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ModulesContainer } from '@nestjs/core';
import type { Server } from 'node:http';

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
  }

  report(): { steps: string[]; running: string[]; listening: boolean } {
    const server = this.app.getHttpServer() as Server;
    const now = Date.now();
    const running = [...this.running].map(([label, since]) => `${label} (${now - since} ms)`);
    return { steps: this.steps, running, listening: server.listening };
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
    Object.defineProperty(target, name, { value: followed, writable: true, configurable: true });
  }
}

function methodOf(target: object, name: string): Callable | undefined {
  for (let o: object | null = target; o; o = Object.getPrototypeOf(o)) {
    const value = Object.getOwnPropertyDescriptor(o, name)?.value as unknown;
    if (typeof value === 'function') return value as Callable;
  }
  return undefined;
}
