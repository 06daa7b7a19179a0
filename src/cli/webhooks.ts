// pausepoint webhooks list|add|rm|deliveries|rotate-secret|enable|recover
import { OUTCOME_EVENT_TYPES, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@pausepoint/sdk';
import { formatSeconds } from '../domain/units.js';
import { newWebhookSecret, ROTATION_OVERLAP_MS } from '../domain/webhooks.js';
import {
  clientFrom,
  err,
  GLOBAL_HELP,
  listObject,
  out,
  parse,
  printJson,
  reportError,
  table,
  UsageError,
} from './common.js';
import { positiveInteger } from './pauses.js';

export const WEBHOOKS_HELP = `Usage:
  pausepoint webhooks list
  pausepoint webhooks add URL [--event TYPE]... [--secret SECRET]
  pausepoint webhooks rm WEBHOOK_ID
  pausepoint webhooks deliveries WEBHOOK_ID [--limit N]
  pausepoint webhooks rotate-secret WEBHOOK_ID
  pausepoint webhooks enable WEBHOOK_ID
  pausepoint webhooks recover WEBHOOK_ID --since TIME [--until TIME]

  add          register an https:// URL for events (default: the outcomes,
               ${OUTCOME_EVENT_TYPES.join(', ')}; add --event pause.voted
               for each reviewer's vote); without --secret a random secret
               is made and printed once: keep it to verify signatures
  rm           delete a webhook (alias: delete)
  deliveries   a webhook's latest deliveries and their attempts
  rotate-secret  a new random secret, printed once; for ${formatSeconds(ROTATION_OVERLAP_MS / 1000)} deliveries
               are signed with the old one too
  enable       turn a disabled webhook (410 Gone, or failing for
               WEBHOOK_DISABLE_AFTER) back on
  recover      re-queue the failed deliveries of events from --since (ISO
               8601) to --until (default now) and deliver the events missed
               while disabled, once each

Exit status: 0 done, 1 the service refused or could not be reached, 2 bad usage.

${GLOBAL_HELP}`;

const OPTIONS = {
  event: { type: 'string', multiple: true },
  secret: { type: 'string' },
  limit: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
} as const;

export async function webhooksCommand(args: string[]): Promise<number> {
  let json = args.includes('--json');
  try {
    const { values, positionals } = parse(args, OPTIONS);
    json = values.json === true;
    const [action, target, ...extra] = positionals;
    if (values.help || action === undefined || action === 'help') {
      out(WEBHOOKS_HELP);
      return values.help || action === 'help' ? 0 : 2;
    }
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const client = clientFrom(values);

    switch (action) {
      case 'list':
      case 'ls': {
        if (target !== undefined) throw new UsageError(`unexpected argument "${target}"`);
        const list = await listObject(client.webhooks.list());
        const webhooks = list.data;
        if (json) printJson(list);
        else if (webhooks.length === 0) out('No webhooks.');
        else {
          out(
            table(
              ['ID', 'MODE', 'STATUS', 'EVENTS', 'URL'],
              webhooks.map((webhook) => [
                webhook.id,
                webhook.mode,
                webhook.status,
                webhook.events.join(','),
                webhook.url,
              ]),
            ),
          );
        }
        return 0;
      }
      case 'add':
      case 'create': {
        if (target === undefined) throw new UsageError('webhooks add needs the URL to deliver to');
        const events = (values.event ?? [...OUTCOME_EVENT_TYPES]).flatMap((event) => event.split(','));
        for (const event of events) {
          if (!WEBHOOK_EVENT_TYPES.includes(event as WebhookEventType)) {
            throw new UsageError(`--event must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}, got "${event}"`);
          }
        }
        const generated = values.secret === undefined;
        const secret = values.secret ?? newWebhookSecret();
        const webhook = await client.webhooks.create({ url: target, events, secret });
        if (json) printJson(generated ? { ...webhook, secret } : webhook);
        else {
          out(`Added ${webhook.id}: ${webhook.url} (${webhook.events.join(', ')}, ${webhook.mode} mode)`);
          if (generated) {
            out(`Secret: ${secret}`);
            err('This secret is shown once; keep it to verify the signatures.');
          }
        }
        return 0;
      }
      case 'rm':
      case 'delete':
      case 'remove': {
        if (target === undefined) throw new UsageError(`webhooks ${action} needs a webhook id`);
        const deleted = await client.webhooks.delete(target);
        if (json) printJson(deleted);
        else out(`Deleted ${deleted.id}`);
        return 0;
      }
      case 'deliveries': {
        if (target === undefined) throw new UsageError('webhooks deliveries needs a webhook id');
        const max = positiveInteger(values.limit ?? '20', '--limit');
        const list = await listObject(client.webhooks.deliveries(target, { limit: Math.min(100, max + 1) }), max);
        const deliveries = list.data;
        if (json) printJson(list);
        else if (deliveries.length === 0) out('No deliveries.');
        else {
          out(
            table(
              ['ID', 'EVENT', 'PAUSE', 'STATUS', 'ATTEMPTS', 'LAST', 'CREATED'],
              deliveries.map((delivery) => [
                delivery.id,
                delivery.event,
                delivery.pause_id,
                delivery.status,
                String(delivery.attempts),
                delivery.last_error ?? (delivery.last_status_code === null ? '-' : String(delivery.last_status_code)),
                delivery.created_at,
              ]),
            ),
          );
        }
        return 0;
      }
      case 'rotate-secret': {
        if (target === undefined) throw new UsageError('webhooks rotate-secret needs a webhook id');
        const rotated = await client.webhooks.rotateSecret(target);
        if (json) printJson(rotated);
        else {
          out(`Rotated ${rotated.id}`);
          out(`Secret: ${rotated.secret}`);
          err(`This secret is shown once; the old one also signs until ${rotated.previous_secret_expires_at}.`);
        }
        return 0;
      }
      case 'enable': {
        if (target === undefined) throw new UsageError('webhooks enable needs a webhook id');
        const webhook = await client.webhooks.enable(target);
        if (json) printJson(webhook);
        else out(`Enabled ${webhook.id}`);
        return 0;
      }
      case 'recover': {
        if (target === undefined) throw new UsageError('webhooks recover needs a webhook id');
        if (values.since === undefined) throw new UsageError('webhooks recover needs --since TIME (ISO 8601)');
        const recovery = await client.webhooks.recover(target, {
          since: values.since,
          ...(values.until === undefined ? {} : { until: values.until }),
        });
        if (json) printJson(recovery);
        else out(`Recovered ${recovery.webhook_id}: ${recovery.requeued} re-queued, ${recovery.added} missed added`);
        return 0;
      }
      default:
        throw new UsageError(
          `unknown action "webhooks ${action}"; use list, add, rm, deliveries, rotate-secret, enable or recover`,
        );
    }
  } catch (error) {
    reportError(error, json, WEBHOOKS_HELP);
    return error instanceof UsageError ? 2 : 1;
  }
}
