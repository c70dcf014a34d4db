import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Redis from 'ioredis';

const SCRIPT = resolve(__dirname, '../../scripts/redis-cluster.sh');

/**
 * A Redis Cluster of a test's own (3 masters, 3 replicas, scripts/redis-cluster.sh), for faults
 * the shared one must not suffer: a master killed, the whole cluster restarted empty.
 */
export class LocalCluster {
  private constructor(
    private readonly dir: string,
    readonly seeds: string,
  ) {}

  static start(): LocalCluster {
    const dir = mkdtempSync(join(tmpdir(), 'enroll-fault-cluster-'));
    return new LocalCluster(dir, run('start', dir));
  }

  get nodes(): { host: string; port: number }[] {
    return this.seeds.split(',').map((s) => ({ host: '127.0.0.1', port: Number(s.split(':')[1]) }));
  }

  /** The port of the master serving this key's slot now. */
  async masterOf(key: string): Promise<number> {
    const any = new Redis(this.nodes[0].port, '127.0.0.1');
    try {
      const slot = (await any.cluster('KEYSLOT', key)) as number;
      const shards = await any.cluster('SLOTS');
      const owner = shards.find(([from, to]) => slot >= from && slot <= to);
      if (!owner) throw new Error(`no master serves slot ${slot}`);
      return owner[2][1];
    } finally {
      any.disconnect();
    }
  }

  /** The ports of the masters serving slots now. */
  async masters(): Promise<number[]> {
    const any = new Redis(this.nodes[0].port, '127.0.0.1');
    try {
      const shards = await any.cluster('SLOTS');
      return [...new Set(shards.map((shard) => shard[2][1] as number))];
    } finally {
      any.disconnect();
    }
  }

  /**
   * Moves the slot of `key` from one master to another the way resharding does: IMPORTING and
   * MIGRATING, its keys MIGRATEd a few at a time (clients meanwhile get ASK, then MOVED), then
   * the new owner told to every master.
   */
  async migrateSlot(key: string, fromPort: number, toPort: number): Promise<void> {
    const [from, to] = [new Redis(fromPort, '127.0.0.1'), new Redis(toPort, '127.0.0.1')];
    try {
      const slot = (await from.cluster('KEYSLOT', key)) as number;
      const [fromId, toId] = [
        (await from.cluster('MYID')) as string,
        (await to.cluster('MYID')) as string,
      ];
      await to.cluster('SETSLOT', slot, 'IMPORTING', fromId);
      await from.cluster('SETSLOT', slot, 'MIGRATING', toId);
      for (;;) {
        const keys = (await from.cluster('GETKEYSINSLOT', slot, 5)) as string[];
        if (keys.length === 0) break;
        await from.migrate('127.0.0.1', toPort, '', 0, 5000, 'KEYS', ...keys);
      }
      for (const port of await this.masters()) {
        const node = new Redis(port, '127.0.0.1');
        await node.cluster('SETSLOT', slot, 'NODE', toId).finally(() => node.disconnect());
      }
    } finally {
      from.disconnect();
      to.disconnect();
    }
  }

  /** SIGKILLs one node: no goodbye to its replica or its clients. */
  kill(port: number): void {
    process.kill(
      Number(readFileSync(join(this.dir, String(port), 'redis.pid'), 'utf8')),
      'SIGKILL',
    );
  }

  /** True once every node still running says cluster_state:ok and `port` is not a master. */
  failedOver(deadPort: number): Promise<boolean> {
    return this.stateOk(deadPort);
  }

  /** True once every node (but `except`) says cluster_state:ok. */
  async stateOk(except = -1): Promise<boolean> {
    for (const { port } of this.nodes.filter((n) => n.port !== except)) {
      const node = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await node.connect();
        if (!/cluster_state:ok/.test((await node.cluster('INFO')) as string)) return false;
      } catch {
        return false;
      } finally {
        node.disconnect();
      }
    }
    return true;
  }

  /**
   * SIGKILLs one master and starts it again in place (same node id, same slots), loading the
   * dump.rdb a `SAVE` left behind, if any: a restart from a persistence file behind its last
   * writes. No replica fails over meanwhile, however long it takes, so the masters stay the
   * same; resolves once every node says cluster_state:ok again.
   */
  async restartInPlace(port: number): Promise<void> {
    await this.allowFailovers(false);
    await this.startAgain(port);
    await this.allowFailovers(true);
  }

  /**
   * SAVE on one node: its dump.rdb then holds its data as of now (loaded if it starts again).
   * A replica's full sync forks a child on its master for a while (after a fresh cluster, or a
   * restart), and Redis refuses SAVE meanwhile: that is waited out.
   */
  async save(port: number): Promise<void> {
    const node = new Redis(port, '127.0.0.1');
    try {
      for (let i = 0; ; i++) {
        try {
          await node.save();
          return;
        } catch (err) {
          if (i > 600 || !/in progress/i.test((err as Error).message)) throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    } finally {
      node.disconnect();
    }
  }

  /** Whether replicas may fail over (cluster-replica-no-failover), set on every running node. */
  async allowFailovers(allow: boolean): Promise<void> {
    await Promise.all(
      this.nodes.map(async ({ port }) => {
        const node = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
        try {
          await node.connect();
          await node.config('SET', 'cluster-replica-no-failover', allow ? 'no' : 'yes');
        } catch {
          // a node that is down (killed by the test) has nothing to set
        } finally {
          node.disconnect();
        }
      }),
    );
  }

  /** Starts a node again in place (SIGKILLed first if it runs); resolves once the cluster is ok. */
  async startAgain(port: number): Promise<void> {
    run('restart-node', this.dir, String(port));
    for (let i = 0; !(await this.stateOk()); i++) {
      if (i > 400) throw new Error(`the cluster did not settle after restarting ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The clients connected to each node now (CLIENT LIST) whose name contains `part`. */
  async clientsNamed(
    part: string,
  ): Promise<{ port: number; id: string; name: string; sub: number }[]> {
    const lists = await Promise.all(
      this.nodes.map(async ({ port }) => {
        const node = new Redis(port, '127.0.0.1');
        try {
          const list = (await node.client('LIST')) as string;
          return list
            .split('\n')
            .filter(Boolean)
            .map((line) => Object.fromEntries(line.split(' ').map((f) => f.split('=', 2))))
            .filter((c) => c.name?.includes(part))
            .map((c) => ({ port, id: c.id, name: c.name, sub: Number(c.sub) }));
        } finally {
          node.disconnect();
        }
      }),
    );
    return lists.flat();
  }

  /** Closes one client's connection on the server's side (CLIENT KILL ID). */
  async killClient(port: number, id: string): Promise<void> {
    const node = new Redis(port, '127.0.0.1');
    await node.client('KILL', 'ID', id).finally(() => node.disconnect());
  }

  /** Every node killed, then a new empty cluster on the same ports. */
  restartEmpty(): void {
    run('restart', this.dir);
  }

  stop(): void {
    run('stop', this.dir);
  }
}

function run(cmd: string, dir: string, ...args: string[]): string {
  return execFileSync('bash', [SCRIPT, cmd, dir, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  }).trim();
}
