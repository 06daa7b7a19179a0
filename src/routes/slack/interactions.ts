import type { FastifyPluginAsync } from 'fastify';
import { receiveInteraction } from '../../actions/slack.js';
import { parseJsonSafely } from '../../domain/safe-json.js';
import { slackSignatureValid } from '../../domain/slack.js';
import { ApiError } from '../../errors.js';
import { unsafeInput } from '../../http/input-safety.js';
import { limitByAddress } from '../../http/rate-limit.js';

// POST /slack/interactions: HTTP mode of the Slack app. Slack posts each
// click as `payload=<JSON>` (form-encoded), signed with `v0` over the raw body
// and a timestamp; anything unsigned, forged or older than 5 minutes is a 401
// and nothing is recorded. A click is acknowledged at once (Slack waits 3 s)
// and answered after; what could not be recorded is told to the clicker alone.

/** Slack's interaction payloads are small; a view's submission is the largest. */
const MAX_INTERACTION_BYTES = 256 * 1024;

const unsigned = () =>
  new ApiError(
    'unauthorized',
    'The request is not signed by Slack (X-Slack-Signature), or is more than 5 minutes old.',
  );

export const slackInteractionsRoute: FastifyPluginAsync = async (app) => {
  const services = app.services;
  const { config, clock, logger } = services;
  // In this plugin's scope only: the signature is over the bytes as sent.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: MAX_INTERACTION_BYTES },
    (_request, body, done) => done(null, body),
  );

  // The work that follows each acknowledgement, awaited when the server
  // closes (stop() closes it before the database).
  const inFlight = new Set<Promise<void>>();
  app.addHook('onClose', async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  });

  // Per client address, before the body is read (as the respond routes): a
  // flood of posts, signed or not, is refused without reading or checking it.
  app.addHook('onRequest', limitByAddress(app.rateLimits.respond, 'slack'));

  // The route's bodyLimit holds for every content type, not only the form's.
  app.post(
    '/slack/interactions',
    { schema: { hide: true }, bodyLimit: MAX_INTERACTION_BYTES },
    async (request, reply) => {
      const secret = config.slack?.signingSecret;
      if (!secret) throw new ApiError('not_found', 'Slack HTTP mode is not configured on this server.');
      const body = request.body;
      const header = (name: string) => {
        const value = request.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      const signed =
        Buffer.isBuffer(body) &&
        slackSignatureValid({
          secret,
          timestamp: header('x-slack-request-timestamp'),
          signature: header('x-slack-signature'),
          body,
          nowMs: clock.now().getTime(),
        });
      if (!signed) throw unsigned();

      const payloadText = new URLSearchParams(body.toString('utf8')).get('payload');
      let payload: unknown;
      try {
        payload = payloadText === null ? undefined : parseJsonSafely(payloadText, 'remove');
      } catch {
        payload = undefined;
      }
      const unsafe = payload === undefined ? undefined : unsafeInput(payload);
      if (payload === undefined || unsafe || typeof payload !== 'object' || payload === null)
        throw new ApiError('invalid_request', 'The body is not a Slack interaction (payload=<JSON>).');

      const { response, after, invalid } = await receiveInteraction(services, payload);
      if (invalid)
        throw new ApiError('invalid_request', `The body is not a Slack ${invalid} interaction this service reads.`);
      // Acknowledged now; the answer (and any message to the clicker) follows,
      // and the server's close waits for it.
      if (after) {
        const work = after()
          .catch((error) => logger.error({ err: error }, 'a Slack interaction could not be handled'))
          .finally(() => inFlight.delete(work));
        inFlight.add(work);
      }
      return response ? reply.code(200).send(response) : reply.code(200).send();
    },
  );
};
