import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { INestApplication, Logger } from '@nestjs/common';
import { createApp, listen } from './app.factory';
import { ConfigError, loadConfig } from './config/load-config';
import { drainV8Pool } from './memory/memory-saver';

async function main(): Promise<void> {
  // A local .env is a convenience for development; real environment variables win.
  if (existsSync('.env')) process.loadEnvFile('.env');
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const app = await createApp(config);
  closeOnSignals(app);
  await listen(app, config.port, config.host);
  // The bound port, not the configured one: PORT=0 asks the OS for a free port.
  const { port } = app.getHttpServer().address() as AddressInfo;
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  // Once started: what start-up itself takes is not V8's pool.
  new Logger('Main').log(`V8's memory saver mode: ${drainV8Pool()}`);
  new Logger('Main').log(`ready: listening on http://${host}:${port}`);
}

/** How long in-flight requests get to finish after SIGTERM before the process gives up. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * On SIGTERM or SIGINT: stop accepting, let in-flight requests finish, close PostgreSQL and
 * Redis (app.close() runs every shutdown hook), and exit 0. Nest's own enableShutdownHooks
 * would re-raise the signal, so the process would never report a clean exit.
 */
function closeOnSignals(app: INestApplication): void {
  const shutdown = (signal: string) => {
    new Logger('Main').log(`${signal}: shutting down`);
    setTimeout(() => {
      console.error(`shutdown took over ${SHUTDOWN_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    const started = Date.now();
    // Keep-alive connections busy now are closed as they turn idle by close() itself
    // (app.factory.ts, closeConnectionsAsTheyIdle).
    app.close().then(
      () => {
        new Logger('Main').log(`closed in ${Date.now() - started} ms`);
        process.exit(0);
      },
      (err) => {
        console.error('shutdown failed:', err);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((err) => {
  console.error('start-up failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
