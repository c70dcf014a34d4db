import {
  ClientRequest,
  createServer,
  get,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { canReleaseParser, releaseParser } from '../../src/live/parser-release';

type ServerSocket = Socket & { parser?: unknown };

/**
 * Giving a stream's HTTP parser back relies on Node's internals (the server's closures over a
 * connection): on the Node this runs on they are as expected, so the release happens; a
 * closure it does not know (another Node's) keeps the parser, rather than leave one that
 * reads with a parser another connection now uses.
 */
describe("A stream's HTTP parser given back (src/live/parser-release.ts)", () => {
  let server: Server;
  let held: ServerResponse[] = [];
  let client: ClientRequest | undefined;
  let onRequest: (req: IncomingMessage, res: ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((req, res) => onRequest(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterEach(() => {
    held.forEach((r) => r.destroy());
    held = [];
    client?.destroy();
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** One request held open; what `decide` says once the request has been read whole. */
  function streamWith<T>(decide: (res: ServerResponse) => T): Promise<T> {
    return new Promise((resolve) => {
      onRequest = (req, res) => {
        held.push(res);
        req.on('end', () => setImmediate(() => resolve(decide(res))));
        req.resume();
      };
      const port = (server.address() as AddressInfo).port;
      client = get({ host: '127.0.0.1', port, path: '/s', agent: false }, (res) => res.resume());
      client.on('error', () => undefined); // destroyed by the test
    });
  }

  it('on this Node, a request read whole releases its parser, and the client still ends the response', async () => {
    const socket = await streamWith((res) => {
      expect(canReleaseParser(res)).toBe(true);
      res.writeHead(200, { connection: 'close' });
      releaseParser(res);
      return res.req.socket as ServerSocket;
    });
    expect(socket.parser).toBeNull();
    const res = held[0];
    const closed = new Promise<void>((r) => res.once('close', () => r()));
    // The client hangs up: its end reaches the response without the parser.
    client!.destroy();
    await closed;
    expect(socket.destroyed).toBe(true);
  });

  it('a server closure it does not know keeps the parser', async () => {
    const kept = await streamWith((res) => {
      const socket = res.req.socket as ServerSocket;
      const other = function socketOnSomething() {}.bind(undefined);
      socket.on('timeout', other);
      const can = canReleaseParser(res);
      releaseParser(res);
      return { can, parser: socket.parser };
    });
    expect(kept.can).toBe(false);
    expect(kept.parser).toBeTruthy();
  });
});
