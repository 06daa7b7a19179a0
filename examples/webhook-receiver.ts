// A webhook receiver (Fastify) that verifies every delivery's signature.
//
//   PAUSEPOINT_WEBHOOK_SECRET=… PORT=8000 npx tsx examples/webhook-receiver.ts
//
// In production, register its public https:// URL with
// `pausepoint webhooks add https://…/hook --secret "$PAUSEPOINT_WEBHOOK_SECRET"`.
// While developing, no public URL is needed: in another terminal run
// `pausepoint listen --forward-to http://localhost:8000/hook`, which signs
// with the same PAUSEPOINT_WEBHOOK_SECRET.
import { parseWebhookEvent, WEBHOOK_HEADERS, WebhookVerificationError } from '@pausepoint/sdk';
import Fastify from 'fastify';

const secret = process.env.PAUSEPOINT_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set PAUSEPOINT_WEBHOOK_SECRET to the webhook’s secret.');
  process.exit(1);
}
const seen = new Set<string>(); // deliveries already handled; use your database in production

const app = Fastify();
// Keep the raw bytes: the signature is over them, not over re-serialised JSON.
app.removeContentTypeParser('application/json');
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

app.post('/hook', async (request, reply) => {
  let event: Awaited<ReturnType<typeof parseWebhookEvent>>;
  try {
    const raw = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
    event = await parseWebhookEvent(raw, request.headers[WEBHOOK_HEADERS.signature], secret);
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      // A forged or corrupted delivery: 401 for a bad signature, 400 for a bad body.
      return reply.code(error.code === 'invalid_signature' ? 401 : 400).send({ error: error.code });
    }
    throw error;
  }

  // Delivery is at least once: a repeat has the same X-Service-Delivery.
  const delivery = String(request.headers[WEBHOOK_HEADERS.delivery] ?? '');
  if (seen.has(delivery)) return reply.code(200).send();
  seen.add(delivery);

  // Answer within 5 seconds; do slow work after answering (a queue, a job).
  switch (event.event) {
    case 'pause.responded':
      console.log(`${event.pause_id} answered: ${event.data.choice}${event.data.text ? ` (${event.data.text})` : ''}`);
      break;
    case 'pause.timed_out':
      console.log(`${event.pause_id} timed out: ${event.data.choice ?? 'no default'}`);
      break;
    case 'pause.cancelled':
      console.log(`${event.pause_id} cancelled`);
      break;
  }
  return reply.code(204).send();
});

const address = await app.listen({ port: Number(process.env.PORT ?? 8000), host: '127.0.0.1' });
console.log(`Receiving pausepoint webhooks at ${address}/hook`);
