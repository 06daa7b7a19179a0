import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { randomBytesPooled } from '../domain/crypto.js';
import { documentOf } from '../html.js';
import { pageSecurityHeaders } from '../http/headers.js';
import { API_REFERENCE_CSS, API_REFERENCE_JS } from './api-reference-assets.js';

// The API's OpenAPI document at /openapi.json, and the reference people read
// at /docs: Redoc's standalone bundle, served from this service (no CDN),
// rendering that document. The page runs no inline script; the renderer's
// injected styles carry a nonce fresh for each answer.

// Markdown: the code spans keep `<API key>` from being read as an HTML tag.
const DESCRIPTION =
  'Pause a program until a human answers. Every endpoint needs `Authorization: Bearer <API key>` except ' +
  '`POST /v1/auth/register`, `POST /v1/auth/login`, `GET` and `POST /v1/respond/{token}`, ' +
  '`POST /v1/billing/webhook`, `GET /health` and `GET /metrics`.';

const BUNDLE_PATH = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

/**
 * Redoc's bundle, with two lines changed so the page keeps to its policy:
 * - the styles it injects as it loads (before Redoc's `nonce` option is read)
 *   take the nonce of the script tag that loads it, like those injected later;
 * - the Redocly logo in the menu's footer would come from their CDN; an empty
 *   source keeps the page from contacting anyone but this service (the image
 *   hides itself when it does not load).
 * A new Redoc version that changes either line is caught by the Chromium test
 * of /docs (a refused style, a request elsewhere).
 */
function adaptBundle(source: string): string {
  return source
    .replace('r.nc=void 0', 'r.nc=document.currentScript&&document.currentScript.nonce||void 0')
    .replaceAll('https://cdn.redoc.ly/redoc/logo-mini.svg', '');
}

let bundle: Promise<Buffer> | undefined;
/** Read on first use: most processes never serve the page. */
function redocBundle(): Promise<Buffer> {
  bundle ??= readFile(BUNDLE_PATH, 'utf8').then(
    (source) => Buffer.from(adaptBundle(source)),
    (error) => {
      bundle = undefined; // tried again on the next request
      throw error;
    },
  );
  return bundle;
}

function ApiReferencePage({ nonce }: { nonce: string }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>pausepoint API reference</title>
        <link rel="stylesheet" href="/docs/assets/api-reference.css" />
      </head>
      <body>
        <noscript>
          <p class="noscript">
            This reference needs JavaScript. The OpenAPI document itself is at <a href="/openapi.json">/openapi.json</a>
            .
          </p>
        </noscript>
        <div id="api-reference" data-spec-url="/openapi.json" data-nonce={nonce}></div>
        <script src="/docs/assets/redoc.standalone.js" nonce={nonce}></script>
        <script src="/docs/assets/api-reference.js"></script>
      </body>
    </html>
  );
}

const asset = (reply: FastifyReply, type: string) =>
  reply.type(`${type}; charset=utf-8`).header('cache-control', 'public, max-age=3600');

/** Registers the OpenAPI generator (before any route, so it sees them all) and the reference's routes. */
export async function installApiReference(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // Redoc shows the version after the title: "pausepoint API (v1)", as the paths' /v1.
      info: { title: 'pausepoint API', version: 'v1', description: DESCRIPTION },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
      security: [{ apiKey: [] }],
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  const showPage = (_request: unknown, reply: FastifyReply) => {
    const nonce = randomBytesPooled(18).toString('base64url');
    return reply
      .headers(
        pageSecurityHeaders({
          referrer: 'no-referrer',
          fetches: true,
          styleNonce: nonce,
          dataAndWorkers: true,
          noForms: true,
        }),
      )
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(documentOf(<ApiReferencePage nonce={nonce} />));
  };
  app.get('/docs', { schema: { hide: true } }, showPage);
  app.get('/docs/', { schema: { hide: true } }, showPage);
  app.get('/docs/assets/redoc.standalone.js', { schema: { hide: true } }, async (_request, reply) =>
    asset(reply, 'text/javascript').send(await redocBundle()),
  );
  app.get('/docs/assets/api-reference.js', { schema: { hide: true } }, (_request, reply) =>
    asset(reply, 'text/javascript').send(API_REFERENCE_JS),
  );
  app.get('/docs/assets/api-reference.css', { schema: { hide: true } }, (_request, reply) =>
    asset(reply, 'text/css').send(API_REFERENCE_CSS),
  );
}
