import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type DeliveryWithAttempts,
  enableOwnedWebhook,
  listWebhookDeliveries,
  type OwnedWebhook,
  readWebhookDelivery,
  redeliver,
  rotateOwnedWebhookSecret,
} from '../actions/webhooks.js';
import type { Mode } from '../domain/keys.js';
import { formatBytes } from '../domain/units.js';
import { MAX_ATTEMPT_RESPONSE_BYTES } from '../domain/webhooks.js';
import { ApiError } from '../errors.js';
import type { DeliveryOfWebhook } from '../store/deliveries.js';
import type { DeliveryStatus } from '../store/schema.js';
import { field } from './forms.js';
import { Copyable, documentOf, Layout, Notice, Time } from './layout.js';
import { ActionsHeader, Pager, StatusFilter } from './lists.js';
import { modeOf, pauseHref } from './pauses.js';
import { type SignedIn, signedInOf } from './session.js';
import { findOwnedWebhook, WebhookStatusBadge, webhookHref, webhookNotFoundPage, webhooksHref } from './webhooks.js';

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
  /** A secret just made by a rotation, shown this once. */
  rotated?: { secret: string; previousSecretExpiresAt: string } | undefined;
  notice?: string | undefined;
  error?: string | undefined;
}

/** A small form that POSTs one of the webhook's actions (rotate-secret, enable). */
const WebhookAction = ({
  signedIn,
  webhook,
  action,
  label,
}: {
  signedIn: SignedIn;
  webhook: OwnedWebhook;
  action: string;
  label: string;
}) => (
  <form method="post" action={`/console/webhooks/${webhook.id}/${action}`} class="inline">
    <input type="hidden" name="csrf" value={signedIn.csrf} />
    <input type="hidden" name="mode" value={webhook.mode} />
    <button type="submit">{label}</button>
  </form>
);

function DeliveryLogPage({
  signedIn,
  webhook,
  query,
  deliveries,
  hasMore,
  redelivered,
  rotated,
  notice,
  error,
}: LogProps) {
  const last = deliveries[deliveries.length - 1];
  const modeName = webhook.mode === 'live' ? 'Live' : 'Test';
  return (
    <Layout title="Webhook deliveries" signedIn={signedIn} section="webhooks">
      <p>
        <a href={webhooksHref(webhook.mode)}>← {modeName} webhooks</a>
      </p>
      {notice && <Notice kind="ok">{notice}</Notice>}
      {error && <Notice kind="error">{error}</Notice>}
      {rotated && (
        <section class="card secret" aria-labelledby="secret">
          <h2 id="secret">The new signing secret</h2>
          <p>
            Deliveries are signed with this secret from now on. Until <Time at={rotated.previousSecretExpiresAt} /> the
            old one signs them too (webhook-signature carries both), so update your receiver before then. Copy it now:
            it is shown only this once.
          </p>
          <Copyable value={rotated.secret} label="the new signing secret" />
        </section>
      )}
      <div class="card">
        <p class="eyebrow">{`${modeName} webhook`}</p>
        <h1 class="url">{webhook.url}</h1>
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <WebhookStatusBadge webhook={webhook} />
            {webhook.disabledReason && ` ${webhook.disabledReason} No deliveries are made; events are still recorded.`}
          </dd>
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
          {webhook.status === 'disabled' && (
            <WebhookAction signedIn={signedIn} webhook={webhook} action="enable" label="Enable" />
          )}{' '}
          <WebhookAction signedIn={signedIn} webhook={webhook} action="rotate-secret" label="Rotate secret" />{' '}
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
                    <a class="muted" href={deliveryHref(webhook, delivery.id)}>
                      Attempts<span class="visually-hidden">{` of ${delivery.type} ${delivery.id}`}</span>
                    </a>
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

const deliveryHref = (webhook: OwnedWebhook, deliveryId: string) =>
  `/console/webhooks/${webhook.id}/deliveries/${deliveryId}${webhook.mode === 'test' ? '?mode=test' : ''}`;

/** One delivery and every attempt kept of it, as GET /v1/webhooks/{id}/deliveries/{delivery_id} answers. */
function DeliveryPage({
  signedIn,
  webhook,
  delivery,
}: {
  signedIn: SignedIn;
  webhook: OwnedWebhook;
  delivery: DeliveryWithAttempts;
}) {
  return (
    <Layout title="Webhook delivery" signedIn={signedIn} section="webhooks">
      <p>
        <a href={`${webhookHref(webhook)}#${delivery.id}`}>← Deliveries to {webhook.url}</a>
      </p>
      <div class="card">
        <p class="eyebrow">Delivery</p>
        <h1>
          <code>{delivery.id}</code>
        </h1>
        <dl class="facts">
          <dt>Event</dt>
          <dd>
            <a href={pauseHref({ id: delivery.pause_id, mode: webhook.mode })}>{delivery.type}</a>
          </dd>
          <dt>Status</dt>
          <dd>
            <DeliveryStatusBadge status={delivery.status} />
          </dd>
          <dt>Made</dt>
          <dd>
            <Time at={delivery.created_at} />
          </dd>
        </dl>
      </div>
      <h2 id="attempts">Attempts</h2>
      {delivery.attemptLog.length === 0 ? (
        <div class="card empty">
          <p>No attempts kept: not sent yet, or its attempts are older than their retention.</p>
        </div>
      ) : (
        <div class="card">
          <table class="stack">
            <caption class="muted">Every attempt kept, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Took</th>
                <th scope="col">Status</th>
                <th scope="col">Error</th>
                <th scope="col">Answer (first {formatBytes(MAX_ATTEMPT_RESPONSE_BYTES)})</th>
              </tr>
            </thead>
            <tbody>
              {delivery.attemptLog.map((attempt) => (
                <tr>
                  <td data-label="When">
                    <Time at={attempt.at} />
                  </td>
                  <td data-label="Took">{`${attempt.duration_ms} ms`}</td>
                  <td data-label="Status">{attempt.status_code === null ? '—' : String(attempt.status_code)}</td>
                  <td data-label="Error">{attempt.error ?? '—'}</td>
                  <td data-label="Answer">
                    {attempt.response_body ? <pre class="answer">{attempt.response_body}</pre> : '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Layout>
  );
}

const html = 'text/html; charset=utf-8';

export function webhookPage(app: FastifyInstance): void {
  async function render(
    signedIn: SignedIn,
    webhook: OwnedWebhook,
    query: LogQuery,
    messages: {
      notice?: string | undefined;
      error?: string | undefined;
      redelivered?: string | undefined;
      rotated?: LogProps['rotated'];
    } = {},
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
      const posted = await postedWebhook(request, reply);
      if (!posted) return reply;
      const { signedIn, webhook, owner } = posted;
      const { delivery } = request.params as { delivery: string };
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

  app.get('/webhooks/:id/deliveries/:delivery', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const { id, delivery } = request.params as { id: string; delivery: string };
    const webhook = await findOwnedWebhook(
      app.services,
      signedIn.developer.id,
      id,
      modeOf((request.query as Record<string, unknown>).mode),
    );
    if (!webhook || !DELIVERY_ID.test(delivery)) return reply.code(404).type(html).send(webhookNotFoundPage(signedIn));
    const owner = { developerId: signedIn.developer.id, mode: webhook.mode };
    try {
      const found = await readWebhookDelivery(app.services, owner, webhook.id, delivery);
      return reply.type(html).send(documentOf(<DeliveryPage signedIn={signedIn} webhook={webhook} delivery={found} />));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        return reply.code(404).type(html).send(webhookNotFoundPage(signedIn));
      }
      throw error;
    }
  });

  /** The signed-in developer's webhook a form posts to, by its id and the form's mode; undefined (404 sent) if not theirs. */
  async function postedWebhook(request: FastifyRequest, reply: FastifyReply) {
    const signedIn = signedInOf(request)!;
    const { id } = request.params as { id: string };
    const mode: Mode = modeOf(field(request.body, 'mode'));
    const webhook = await findOwnedWebhook(app.services, signedIn.developer.id, id, mode);
    if (!webhook) {
      await reply.code(404).type(html).send(webhookNotFoundPage(signedIn));
      return undefined;
    }
    return { signedIn, webhook, owner: { developerId: signedIn.developer.id, mode: webhook.mode } };
  }

  app.post('/webhooks/:id/rotate-secret', { config: { console: 'signed-in' } }, async (request, reply) => {
    const posted = await postedWebhook(request, reply);
    if (!posted) return reply;
    const rotated = await rotateOwnedWebhookSecret(app.services, posted.owner, posted.webhook.id);
    const shown = { secret: rotated.secret, previousSecretExpiresAt: rotated.previousSecretExpiresAt };
    // Shown in the answer to this POST only: never in a page that can be loaded again.
    return reply.type(html).send(await render(posted.signedIn, rotated.webhook, {}, { rotated: shown }));
  });

  app.post('/webhooks/:id/enable', { config: { console: 'signed-in' } }, async (request, reply) => {
    const posted = await postedWebhook(request, reply);
    if (!posted) return reply;
    const enabled = await enableOwnedWebhook(app.services, posted.owner, posted.webhook.id);
    const notice = 'The webhook is enabled: new events are delivered again.';
    return reply.type(html).send(await render(posted.signedIn, enabled, {}, { notice }));
  });
}
