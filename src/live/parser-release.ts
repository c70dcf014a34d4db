import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Node's own pool of HTTP parsers (`_http_common`, what its HTTP client and upgrades use; the
 * same in Node 22 and 24). Looked up, not assumed: where it is missing nothing is released.
 */
type FreeParser = (parser: unknown, req: IncomingMessage | null, socket: Socket) => void;
const freeParser = loadFreeParser();

function loadFreeParser(): FreeParser | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const common = require('_http_common') as { freeParser?: unknown };
    return typeof common.freeParser === 'function' ? (common.freeParser as FreeParser) : null;
  } catch {
    return null;
  }
}

type ServerSocket = Socket & { parser?: { incoming?: unknown } | null };
type Listener = (...args: unknown[]) => void;

/**
 * The closures Node's HTTP server puts on a connection (lib/_http_server.js, Node 22 and 24):
 * of them only the data and end readers hold its parser; the others read `socket.parser` when
 * they run. A connection with any other closure of a server's (another Node) keeps its parser.
 */
const SERVER_CLOSURES = ['bound socketOnClose', 'bound socketOnData', 'bound socketOnDrain', 'bound socketOnEnd']; // prettier-ignore

/** The server's readers of a connection, which hold its parser; null where Node differs. */
function parserReaders(socket: ServerSocket): { data: Listener; end: Listener } | null {
  const closures = new Map<string, Listener>();
  for (const event of socket.eventNames()) {
    for (const l of socket.listeners(event) as Listener[]) {
      if (!l.name.startsWith('bound ')) continue;
      if (closures.has(l.name)) return null;
      closures.set(l.name, l);
    }
  }
  const names = [...closures.keys()].sort();
  if (names.join() !== SERVER_CLOSURES.join()) return null;
  return { data: closures.get('bound socketOnData')!, end: closures.get('bound socketOnEnd')! };
}

/**
 * Whether a live stream's connection can be handed back from Node's HTTP parser: its request
 * has been read whole, the parser is reading nothing else, and the server's readers are the
 * ones Node sets. Asked before the headers go out, so that the response can say
 * `Connection: close` (the connection will serve no other request).
 */
export function canReleaseParser(res: ServerResponse): boolean {
  const req = res.req as IncomingMessage | undefined;
  const socket = req?.socket as ServerSocket | undefined;
  if (!freeParser || !req?.complete || !socket?.parser) return false;
  return socket.parser.incoming === req && parserReaders(socket) !== null;
}

/**
 * Gives a live stream's HTTP parser back to Node's pool, as Node does for an upgraded
 * connection. A parser is ~10 KB of native memory in Node 24.14 and later (1.9 KB before), and
 * Node holds one per connection for its whole life: 5,000 open streams kept ~50 MB of malloc'd
 * parsers doing nothing, since a stream's request has long been read (bench/RESULTS.md). What
 * the parser did for the connection afterwards is done here: the client's end (FIN) ends it.
 * A response that has released its parser must be the connection's last (`Connection: close`,
 * which `canReleaseParser` is asked for first).
 */
export function releaseParser(res: ServerResponse): void {
  if (!canReleaseParser(res)) return;
  const req = res.req;
  const socket = req.socket as ServerSocket;
  const readers = parserReaders(socket)!;
  socket.removeListener('data', readers.data);
  socket.removeListener('end', readers.end);
  // Nothing reads what the client sends now; its end (the page closed) closes the connection,
  // and so the response ('close', which every stream listens for).
  socket.on('end', () => socket.destroy());
  freeParser!(socket.parser, req, socket);
  socket.resume();
}
