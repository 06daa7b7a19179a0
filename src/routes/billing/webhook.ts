import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { applyPaymentEvent } from '../../actions/billing.js';
import { readProviderEvent, verifyPaymentSignature } from '../../domain/billing.js';
import { parseJsonSafely } from '../../domain/safe-json.js';
import { ApiError } from '../../errors.js';
import { unsafeInput } from '../../http/input-safety.js';
import { errorResponses } from '../../http/schemas.js';

// POST /v1/billing/webhook: the payment provider's events, authenticated by
// the Payment-Signature header over the raw body (docs/concepts.md,
// "Plans, quota and billing"). The body is kept as bytes until the signature has
// been checked.

const Received = Type.Object({
  received: Type.Literal(true),
  result: Type.Union([Type.Literal('applied'), Type.Literal('duplicate'), Type.Literal('ignored')]),
});

const badSignature = () =>
  new ApiError(
    'invalid_signature',
    'The Payment-Signature header is missing, malformed, stale or does not match the body.',
  );

export const billingWebhookRoute: FastifyPluginAsyncTypebox = async (app) => {
  const { config, clock } = app.services;
  // In this plugin's scope only: the signature is over the bytes as sent.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post(
    '/billing/webhook',
    {
      config: { auth: 'none' },
      schema: {
        summary: 'Receive payment events',
        description:
          'The payment provider’s events, verified by the `Payment-Signature` header over the raw body; 503 when billing is not configured.',
        tags: ['billing'],
        security: [],
        headers: Type.Object({ 'payment-signature': Type.Optional(Type.String({ maxLength: 4096 })) }),
        response: { 200: Received, ...errorResponses(400, 503) },
      },
    },
    async (request) => {
      const secret = config.paymentWebhookSecret;
      if (!secret) {
        throw new ApiError(
          'not_configured',
          'Billing is not configured on this server (PAYMENT_WEBHOOK_SECRET is unset).',
        );
      }
      const raw = request.body;
      const header = request.headers['payment-signature'];
      if (!Buffer.isBuffer(raw) || !header) throw badSignature();
      if (!(await verifyPaymentSignature(raw, header, secret, clock.now().getTime()))) throw badSignature();

      let parsed: unknown;
      try {
        // Signed by the provider, whose customers may put any key in their metadata:
        // a poisoning key is dropped, never a reason to refuse (and lose) the event.
        parsed = parseJsonSafely(raw, 'remove');
      } catch {
        throw new ApiError('invalid_request', 'The body is not valid JSON.');
      }
      const unsafe = unsafeInput(parsed);
      if (unsafe) throw unsafe;
      const event = readProviderEvent(parsed);
      if (!event)
        throw new ApiError('invalid_request', 'The body is not a payment event (id, type, created, data.object).');

      const outcome = await applyPaymentEvent(app.services, event);
      return { received: true as const, result: outcome.result };
    },
  );
};
