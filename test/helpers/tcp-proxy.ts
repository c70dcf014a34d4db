import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';

/**
 * A loopback TCP proxy in front of a real server, to take it away and bring it back in a
 * test: down() cuts every connection and refuses new ones, up() accepts again on the same port;
 * severClients() cuts only the clients' side, so the server goes on with what it was sent (a
 * transaction whose answer is lost in transit).
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection(this.targetPort, this.targetHost);
      const pair = { client, upstream };
      this.pairs.add(pair);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => {
        if (this.pairs.delete(pair)) upstream.destroy();
      });
      upstream.on('close', () => {
        this.pairs.delete(pair);
        client.destroy();
      });
    });
    // Fails, rather than waits for ever, when its old port was taken while it was down.
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /**
   * Cuts every client's connection but keeps the server's side open (its answers are read and
   * dropped): whatever the server was running goes on to the end. down() closes those too.
   */
  severClients(): void {
    for (const pair of [...this.pairs]) {
      this.pairs.delete(pair);
      pair.upstream.unpipe(pair.client);
      pair.upstream.resume();
      pair.client.destroy();
    }
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
