// The baseline for bench/create-pause.ts: a bare Fastify 5 server with one
// route, run as its own process (node --import tsx bench/hello-world.ts) on
// PORT, logger off, the way the service runs with LOG_LEVEL=warn.
import Fastify from 'fastify';

const port = Number(process.env.PORT ?? 3001);
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));

await app.listen({ port, host: '127.0.0.1' });

const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
