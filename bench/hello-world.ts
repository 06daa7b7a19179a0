// The baselines of bench/create-pause.ts: a bare Fastify 5 server, run as its
// own process (node --import tsx bench/hello-world.ts) on PORT, logger off,
// the way the service runs with LOG_LEVEL=warn. Three routes:
// - GET / answers {hello: 'world'}: the baseline the issue names, and a
//   read's bare GET (DESIGN.md, "How performance is measured");
// - POST /bare parses the JSON body with Fastify's own parser and answers a
//   small JSON object, without schemas: the bare POST, the cost of HTTP and
//   JSON alone, which a create and a read are measured against;
// - POST /pause takes the create-pause body and answers a pause, both checked
//   with the service's own schemas, and does nothing else (no key, no token,
//   no database): what Fastify itself costs for a create request;
// - GET /floor/:id, when FLOOR_DATABASE names the service's SQLite file: the
//   least a read of a pause can do on this stack. The bearer key's SHA-256
//   looked up in a map (FLOOR_KEY_SHA256), one prepared select of the pause
//   row by primary key (better-sqlite3, read-only, rows as arrays as the
//   service fetches them), the row answered as JSON. No decoding, no response
//   link, no log line, no metrics: what bench:api's get is compared with to
//   tell the stack's cost from the service's.
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { CreatePauseInput } from '../src/actions/create-pause.js';
import type { PresentedPause } from '../src/actions/present-pause.js';
import { PauseObject } from '../src/routes/pauses/schemas.js';

const port = Number(process.env.PORT ?? 3001);
// The schemas carry `x-examples` for the API reference, a keyword Ajv's strict mode does not know.
const app = Fastify({ logger: false, ajv: { customOptions: { keywords: ['x-examples'] } } });
const PAUSE_ID = 'pause_01kmz3k7y4p8v2d6q9w0xr5tyh';
app.get('/', async () => ({ hello: 'world' }));
app.post('/bare', async (request) => ({ received: typeof request.body === 'object', id: PAUSE_ID }));

app.post('/pause', { schema: { body: CreatePauseInput, response: { 201: PauseObject } } }, async (request, reply) => {
  const body = request.body as { title: string; body?: string; expires_in?: number; metadata?: object };
  const now = new Date();
  const createdAt = now.toISOString();
  // Typed as the service's pause, so a field added there fails the type check here, not the benchmark at run time.
  const pause: PresentedPause = {
    id: PAUSE_ID,
    object: 'pause',
    mode: 'test',
    status: 'pending',
    title: body.title,
    body: body.body ?? null,
    options: ['approve', 'reject'],
    allow_text: false,
    form: null,
    require_text: [],
    options_style: {},
    expires_at: new Date(now.getTime() + (body.expires_in ?? 3600) * 1000).toISOString(),
    timeout_default: null,
    metadata: body.metadata ?? {},
    response_url: `http://127.0.0.1:${port}/r/${PAUSE_ID}.Jm0eQ5cC3n9Yt2v8K1xwLr4ZbP6sHq7uTgAoDfEiWkM`,
    response: null,
    notifications: [],
    reviewers: [],
    quorum: null,
    veto: [],
    remind_every: null,
    remind_max: null,
    escalate: null,
    created_at: createdAt,
    updated_at: createdAt,
  };
  return reply.code(201).send(pause);
});

const floorDatabase = process.env.FLOOR_DATABASE;
if (floorDatabase) {
  const database = new Database(floorDatabase, { readonly: true, fileMustExist: true });
  const select = database.prepare('select * from pauses where id = ?').raw(true);
  const columns = select.columns().map((column) => column.name);
  const keys = new Map([[process.env.FLOOR_KEY_SHA256, { developerId: 'the one key' }]]);
  app.get('/floor/:id', async (request, reply) => {
    const key = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
    if (!keys.has(createHash('sha256').update(key).digest('hex'))) return reply.code(401).send({ error: 'key' });
    const values = select.get((request.params as { id: string }).id) as unknown[] | undefined;
    if (!values) return reply.code(404).send({ error: 'not found' });
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i];
    return row;
  });
}

await app.listen({ port, host: '127.0.0.1' });

const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
