import type { FastifyInstance } from 'fastify';
import { listWebhookDeliveries, type OwnedWebhook, redeliver } from '../actions/webhooks.js';
import type { Mode } from '../domain/keys.js';
import { ApiError } from '../errors.js';
import type { DeliveryOfWebhook } from '../store/deliveries.js';
import type { DeliveryStatus } from '../store/schema.js';
import { field } from './forms.js';
import { documentOf, Layout, Notice, Time } from './layout.js';
import { ActionsHeader, Pager, StatusFilter } from './lists.js';
import { modeOf, pauseHref } from './pauses.js';
import { type SignedIn, signedInOf } from './session.js';
import { findOwnedWebhook, webhookHref, webhookNotFoundPage, webhooksHref } from './webhooks.js';

// A webhook's delivery log, newest first, through the same action as
// GET /v1/webhooks/{id}/deliveries (with a status filter and the API's
// cursor), and a failed delivery sent again through the same action as
// POST …/deliveries/{id}/retry.

export const DELIVERY_PAGE_SIZE = 25;
const STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed'];
export const DELIVERY_STATUS_LABEL: Record<DeliveryStatus, string> = {
  pending: 'Pending',
  succeeded: 'Delivered',
  failed: 'Failed',
};
const DELIVERY_ID = /^dlv_[0-9A-Za-z]{1,64}$/;

export const DeliveryStatusBadge = ({ status }: { status: DeliveryStatus }) => (
  <span class={`status ${status}`}>{DELIVERY_STATUS_LABEL[status]}</span>
);

/** The last attempt's outcome in a few words. */
export function lastResult(delivery: Pick<DeliveryOfWebhook, 'attempts' | 'last_status_code' | 'last_error'>): string {
  if (Number(delivery.attempts) === 0) return 'Not sent yet';
  const code = delivery.last_status_code === null ? '' : `HTTP ${delivery.last_status_code}`;
  const error = delivery.last_error ?? '';
  // A refused status is stored as the error "HTTP 500" already.
  if (error && code && !error.startsWith(code)) return `${code}: ${error}`;
  return error || code || '—';
}

/**
 * A delivery's status, attempts and last result, as table cells. One just
 * queued again (`requeued`, while still pending) shows that, not the result
 * of the round that failed, which the row keeps until the next attempt ends.
 */
export const DeliveryCells = ({ delivery, requeued }: { delivery: DeliveryOfWebhook; requeued?: boolean }) => (
  <>
    <td data-label="Status">
      <DeliveryStatusBadge status={delivery.status} />
    </td>
    <td data-label="Attempts">{String(delivery.attempts)}</td>
    <td data-label="Last result" class="result">
      {requeued && delivery.status === 'pending' ? 'Queued for redelivery' : lastResult(delivery)}
    </td>
  </>
);

interface LogQuery {
  status?: DeliveryStatus | undefined;
  after?: string | undefined;
}

function logHref(webhook: OwnedWebhook, query: LogQuery): string {
  const params = new URLSearchParams();
  if (query.status) params.set('status', query.status);
  if (query.after) params.set('after', query.after);
  return webhookHref(webhook, params.toString());
}

interface LogProps {
  signedIn: SignedIn;
  webhook: OwnedWebhook;
  query: LogQuery;
  deliveries: DeliveryOfWebhook[];
  hasMore: boolean;
  /** The delivery just queued again. */
  redelivered?: string | undefined;
  notice?: string | undefined;
  error?: string | undefined;
}

function DeliveryLogPage({ signedIn, webhook, query, deliveries, hasMore, redelivered, notice, error }: LogProps) {
  const last = deliveries[deliveries.length - 1];
  const modeName = webhook.mode === 'live' ? 'Live' : 'Test';
  return (
    <Layout title="Webhook deliveries" signedIn={signedIn} section="webhooks">
      <p>
        <a href={webhooksHref(webhook.mode)}>← {modeName} webhooks</a>
      </p>
      {notice && <Notice kind="ok">{notice}</Notice>}
      {error && <Notice kind="error">{error}</Notice>}
      <div class="card">
        <p class="eyebrow">{`${modeName} webhook`}</p>
        <h1 class="url">{webhook.url}</h1>
        <dl class="facts">
          <dt>Events</dt>
          <dd>{webhook.events.join(', ')}</dd>
          <dt>Added</dt>
          <dd>
            <Time at={webhook.createdAt} />
          </dd>
          <dt>Id</dt>
          <dd>
            <code>{webhook.id}</code>
          </dd>
        </dl>
        <p>
          <a
            class="button danger"
            href={`/console/webhooks/${webhook.id}/remove${webhook.mode === 'test' ? '?mode=test' : ''}`}
          >
            Remove this webhook…
          </a>
        </p>
      </div>
      <h2 id="deliveries">Deliveries</h2>
      <div class="toolbar">
        <StatusFilter
          action={`/console/webhooks/${webhook.id}`}
          mode={webhook.mode}
          statuses={STATUSES}
          labels={DELIVERY_STATUS_LABEL}
          selected={query.status}
        />
      </div>
      {deliveries.length === 0 ? (
        <div class="card empty">
          <p>
            {query.after
              ? 'No more deliveries.'
              : query.status
                ? `No ${DELIVERY_STATUS_LABEL[query.status].toLowerCase()} deliveries.`
                : 'No deliveries yet: one is made for each subscribed event of your pauses.'}
          </p>
        </div>
      ) : (
        <div class="card">
          <table class="stack">
            <caption class="muted">
              {`Deliveries${query.status ? `, ${DELIVERY_STATUS_LABEL[query.status].toLowerCase()}` : ''}, newest first`}
            </caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last result</th>
                <th scope="col">Next attempt</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <tr id={delivery.id}>
                  <td data-label="Event">
                    <a href={pauseHref({ id: delivery.pause_id, mode: webhook.mode })}>{delivery.type}</a>
                    <div class="muted">
                      <Time at={delivery.created_at} />
                    </div>
                  </td>
                  <DeliveryCells delivery={delivery} requeued={delivery.id === redelivered} />
                  <td data-label="Next attempt">
                    {delivery.status === 'pending' && delivery.next_attempt_at ? (
                      <Time at={delivery.next_attempt_at} />
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>
                    {delivery.status === 'failed' && (
                      <form
                        method="post"
                        action={`/console/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`}
                      >
                        <input type="hidden" name="csrf" value={signedIn.csrf} />
                        <input type="hidden" name="mode" value={webhook.mode} />
                        <button type="submit" class="small" aria-label={`Redeliver ${delivery.type} ${delivery.id}`}>
                          Redeliver
                        </button>
                      </form>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        newest={query.after ? logHref(webhook, { status: query.status }) : undefined}
        older={hasMore && last ? logHref(webhook, { ...query, after: last.id }) : undefined}
      >
        Older deliveries
      </Pager>
    </Layout>
  );
}

const html = 'text/html; charset=utf-8';

export function webhookPage(app: FastifyInstance): void {
  async function render(
    signedIn: SignedIn,
    webhook: OwnedWebhook,
    query: LogQuery,
    messages: { notice?: string | undefined; error?: string | undefined; redelivered?: string | undefined } = {},
  ): Promise<string> {
    const owner = { developerId: signedIn.developer.id, mode: webhook.mode };
    const { rows, hasMore } = await listWebhookDeliveries(app.services, owner, webhook.id, {
      limit: DELIVERY_PAGE_SIZE,
      startingAfter: query.after,
      status: query.status,
    });
    return documentOf(
      <DeliveryLogPage
        signedIn={signedIn}
        webhook={webhook}
        query={query}
        deliveries={rows}
        hasMore={hasMore}
        {...messages}
      />,
    );
  }

  app.get('/webhooks/:id', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const { id } = request.params as { id: string };
    const raw = request.query as Record<string, unknown>;
    const webhook = await findOwnedWebhook(app.services, signedIn.developer.id, id, modeOf(raw.mode));
    if (!webhook) return reply.code(404).type(html).send(webhookNotFoundPage(signedIn));
    const query: LogQuery = {
      status: STATUSES.find((status) => status === raw.status),
      after: typeof raw.after === 'string' && DELIVERY_ID.test(raw.after) ? raw.after : undefined,
    };
    const redelivered =
      typeof raw.redelivered === 'string' && DELIVERY_ID.test(raw.redelivered) ? raw.redelivered : undefined;
    const notice = redelivered ? 'The delivery is queued to be sent again.' : undefined;
    return reply.type(html).send(await render(signedIn, webhook, query, { notice, redelivered }));
  });

  app.post(
    '/webhooks/:id/deliveries/:delivery/redeliver',
    { config: { console: 'signed-in' } },
    async (request, reply) => {
      const signedIn = signedInOf(request)!;
      const { id, delivery } = request.params as { id: string; delivery: string };
      const mode: Mode = modeOf(field(request.body, 'mode'));
      const webhook = await findOwnedWebhook(app.services, signedIn.developer.id, id, mode);
      if (!webhook) return reply.code(404).type(html).send(webhookNotFoundPage(signedIn));
      const owner = { developerId: signedIn.developer.id, mode: webhook.mode };
      try {
        await redeliver(app.services, owner, webhook.id, delivery);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        return reply
          .code(error.status)
          .type(html)
          .send(await render(signedIn, webhook, {}, { error: error.message }));
      }
      return reply.redirect(`${webhookHref(webhook, `redelivered=${delivery}`)}#${delivery}`, 303);
    },
  );
}
