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

  /** SIGKILLs one node: no goodbye to its replica or its clients. */
  kill(port: number): void {
    process.kill(
      Number(readFileSync(join(this.dir, String(port), 'redis.pid'), 'utf8')),
      'SIGKILL',
    );
  }

  /** True once every node still running says cluster_state:ok and `port` is not a master. */
  async failedOver(deadPort: number): Promise<boolean> {
    for (const { port } of this.nodes.filter((n) => n.port !== deadPort)) {
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

  /** Every node killed, then a new empty cluster on the same ports. */
  restartEmpty(): void {
    run('restart', this.dir);
  }

  stop(): void {
    run('stop', this.dir);
  }
}

function run(cmd: string, dir: string): string {
  return execFileSync('bash', [SCRIPT, cmd, dir], { encoding: 'utf8', timeout: 60_000 }).trim();
}
