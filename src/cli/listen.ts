// pausepoint listen --forward-to http://localhost:8000/hook
//
// Receives this key's events from the service (GET /v1/events, long-polled)
// and re-sends each to a local URL exactly as a webhook delivery would come:
// the same JSON body, byte for byte, signed with a secret in
// X-Service-Signature and in Standard Webhooks' webhook-signature (with
// webhook-id and webhook-timestamp), with X-Service-Event and
// X-Service-Delivery (a new dlv_ id per forward, as each of the service's
// deliveries has its own). So a
// webhook receiver can be developed without a public https:// URL.
import {
  PausepointError,
  signWebhookPayload,
  standardSignature,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '@pausepoint/sdk';
import { newId } from '../domain/ids.js';
import { newWebhookSecret } from '../domain/webhooks.js';
import {
  CLI_VERSION,
  clientFrom,
  describeError,
  err,
  GLOBAL_HELP,
  modeOfKey,
  out,
  parse,
  reportError,
  UsageError,
  withInterrupt,
} from './common.js';
import { parseDuration } from './duration.js';

export const LISTEN_HELP = `Usage: pausepoint listen --forward-to URL [flags]

Receives this key's events as they happen and POSTs each to URL, signed as a
webhook delivery is (X-Service-Signature, X-Service-Event, X-Service-Delivery,
and Standard Webhooks' webhook-id, webhook-timestamp and webhook-signature),
so you can develop a webhook receiver on your machine. Runs until Ctrl-C.

Flags:
  --forward-to URL     where to POST the events (http:// is fine)
  --secret SECRET      sign with this (default: $PAUSEPOINT_WEBHOOK_SECRET, else a
                       random one, printed at start; a secret you give is not printed)
  --event TYPE         forward only this type; repeatable (${WEBHOOK_EVENT_TYPES.join(', ')})
  --since WHEN         replay events since WHEN first: an ISO time, or a duration ago (10m)

With --json, one JSON object per line: {"type":"ready",…} then {"type":"forwarded",…}.

${GLOBAL_HELP}`;

const OPTIONS = {
  'forward-to': { type: 'string' },
  secret: { type: 'string' },
  event: { type: 'string', multiple: true },
  since: { type: 'string' },
} as const;

const FORWARD_TIMEOUT_MS = 10_000;

export async function listenCommand(args: string[]): Promise<number> {
  let json = args.includes('--json');
  try {
    const { values, positionals } = parse(args, OPTIONS);
    json = values.json === true;
    if (values.help) {
      out(LISTEN_HELP);
      return 0;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const forwardTo = values['forward-to'];
    if (!forwardTo) throw new UsageError('listen needs --forward-to URL');
    let target: URL;
    try {
      target = new URL(forwardTo);
    } catch {
      throw new UsageError(`--forward-to: not a URL: "${forwardTo}"`);
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw new UsageError('--forward-to must be an http:// or https:// URL');
    }
    const types = (values.event ?? []).flatMap((event) => event.split(','));
    for (const type of types) {
      if (!WEBHOOK_EVENT_TYPES.includes(type as WebhookEventType)) {
        throw new UsageError(`--event must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}, got "${type}"`);
      }
    }
    const since = values.since === undefined ? undefined : parseSince(values.since);
    const given = values.secret
      ? { secret: values.secret, from: 'given by --secret' }
      : process.env.PAUSEPOINT_WEBHOOK_SECRET
        ? { secret: process.env.PAUSEPOINT_WEBHOOK_SECRET, from: 'in PAUSEPOINT_WEBHOOK_SECRET' }
        : undefined;
    const secret = given?.secret ?? newWebhookSecret();
    const client = clientFrom(values);
    const emit = (record: Record<string, unknown>) => out(JSON.stringify(record));

    await withInterrupt(async (signal) => {
      const events = client.events.listen({
        since,
        signal,
        onReady: (from) => {
          if (json) {
            // Only a generated secret is printed: the receiver needs it, and
            // nobody else knows it. One the user gave stays out of logs.
            emit({
              type: 'ready',
              forward_to: target.href,
              ...(given ? {} : { secret }),
              secret_generated: !given,
              since: from.toISOString(),
            });
            return;
          }
          out(`Listening for ${modeOfKey(values)} events on ${client.baseUrl}, forwarding to ${target.href}`);
          out(
            given
              ? `Signing with the secret ${given.from}`
              : `Signing with secret: ${secret} (generated; set PAUSEPOINT_WEBHOOK_SECRET to keep one)`,
          );
          out('Ctrl-C stops.');
        },
        onError: (error) => {
          if (json) emit({ type: 'error', message: describeError(error) });
          else err(`pausepoint: ${describeError(error)}; retrying`);
        },
      });
      for await (const event of events) {
        if (types.length > 0 && !types.includes(event.type)) continue;
        const result = await forward(target, event, secret);
        if (json) {
          emit({
            type: 'forwarded',
            event_id: event.id,
            event: event.type,
            pause_id: event.pause_id,
            delivery_id: result.deliveryId,
            ok: result.ok,
            status: result.status,
            ...(result.error === undefined ? {} : { error: result.error }),
          });
        } else {
          const outcome = result.ok ? `${result.status}` : `failed: ${result.error ?? `HTTP ${result.status}`}`;
          out(`${event.created_at}  ${event.type.padEnd(15)}  ${event.pause_id}  -> ${outcome}`);
        }
      }
    });
    return 0;
  } catch (error) {
    reportError(error, json, LISTEN_HELP);
    return error instanceof UsageError ? 2 : 1;
  }
}

function parseSince(text: string): Date {
  if (/^\d+[smhd]?$|^(\d+[smhd])+$/i.test(text.trim())) {
    return new Date(Date.now() - parseDuration(text, '--since') * 1000);
  }
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) throw new UsageError(`--since: not a time or duration: "${text}"`);
  return at;
}

interface Forwarded {
  deliveryId: string;
  ok: boolean;
  status: number | null;
  error?: string;
}

async function forward(
  target: URL,
  event: { id: string; type: string; payload: Record<string, unknown> },
  secret: string,
): Promise<Forwarded> {
  // The exact bytes the service would have delivered (JSON.stringify of the stored envelope).
  const body = JSON.stringify(event.payload);
  const deliveryId = newId('dlv');
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': `pausepoint-cli-listen/${CLI_VERSION}`,
        'x-service-signature': await signWebhookPayload(body, secret),
        'x-service-event': event.type,
        'x-service-delivery': deliveryId,
        'webhook-id': deliveryId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': await standardSignature(body, deliveryId, timestamp, secret),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await response.arrayBuffer().catch(() => undefined);
    return { deliveryId, ok: response.status >= 200 && response.status < 300, status: response.status };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    const reason =
      error instanceof PausepointError
        ? describeError(error)
        : (cause?.code ?? (error as Error).message ?? String(error));
    return { deliveryId, ok: false, status: null, error: reason };
  }
}
