import { runFound } from './global-setup';
import { TEMPLATE_ENV, adminQuery } from './pg';
import { eachServer, serverName } from './redis';

export default async function globalTeardown(): Promise<void> {
  const name = process.env[TEMPLATE_ENV];
  if (name) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await runFound.browserServer?.close();
  const found = runFound.keyspaceEvents;
  if (found) {
    await eachServer(async (s) => {
      const was = found.get(serverName(s));
      if (was !== undefined) await s.config('SET', 'notify-keyspace-events', was);
    });
  }
}
