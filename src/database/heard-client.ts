import type { Pool, PoolClient } from 'pg';

/**
 * A pooled connection whose socket errors never go unheard: the pool listens only while a
 * connection is idle, and a connection lost mid-transaction emits 'error' on the client besides
 * failing the query (which is where it is answered), so an unheard one would crash the process.
 * Every transaction run on the raw pool takes its connection here.
 */
export async function heardClient(pool: Pool): Promise<PoolClient> {
  const client = await pool.connect();
  if (!client.listeners('error').includes(heard)) client.on('error', heard);
  return client;
}

function heard(): void {}
