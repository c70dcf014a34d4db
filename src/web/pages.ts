import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type {} from '@fastify/static'; // its reply.sendFile, for the types
import type { FastifyReply } from 'fastify';
import { Logger } from '@nestjs/common';

// The built pages: dist/web beside dist/src when compiled (this file is dist/src/web/), and the
// same dist/web from src/web/ under ts-jest. `npm run build` compiles web/src and copies the HTML and CSS there.
const WEB_DIR = [resolve(__dirname, '../../web'), resolve(__dirname, '../../dist/web')].find((d) =>
  existsSync(resolve(d, 'student.js')),
);

/** What the pages may load: their own files and the API, nothing else. */
const PAGE_HEADERS: Record<string, string> = {
  // A new release reaches students at once: every load revalidates (ETag / Last-Modified).
  'Cache-Control': 'no-cache',
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/** Serves the student page at `/`, the admin console at `/admin`, and their files. */
export function servePages(app: NestFastifyApplication): void {
  if (!WEB_DIR) {
    new Logger('Pages').warn('dist/web is missing (run `npm run build`): the pages are not served');
    return;
  }
  app.useStaticAssets({
    root: WEB_DIR,
    prefix: '/',
    wildcard: false, // only files that exist get a route; anything else stays NOT_FOUND
    index: ['index.html'],
    cacheControl: false,
    // @fastify/static 10 hands setHeaders the Fastify reply (its types still say a raw response).
    setHeaders: (reply: unknown) => void (reply as FastifyReply).headers(PAGE_HEADERS),
  });
  // The admin console (its token, like the student page's, comes from the fragment or a form).
  app
    .getHttpAdapter()
    .getInstance()
    .get('/admin', (_req, reply) => reply.headers(PAGE_HEADERS).sendFile('admin.html'));
}
