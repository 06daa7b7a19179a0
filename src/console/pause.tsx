import type { FastifyInstance } from 'fastify';
import {
  type NotificationPreview,
  nobodyTold,
  previewSuppressed,
  resendNotification,
} from '../actions/notifications.js';
import type { PresentedNotification, PresentedPause } from '../actions/present-pause.js';
import { readOwnedPause } from '../actions/read-pauses.js';
import { pauseTimeline, type TimelineEntry } from '../actions/timeline.js';
import { listOwnedPauseDeliveries } from '../actions/webhooks.js';
import type { ServiceContext } from '../context.js';
import type { Mode } from '../domain/keys.js';
import { ApiError } from '../errors.js';
import type { DeliveryOfPause } from '../store/deliveries.js';
import { FormValues } from './form-values.js';
import { field } from './forms.js';
import { Breakable, Copyable, documentOf, ErrorPage, Layout, Notice, Time, urlParts } from './layout.js';
import { inEitherMode } from './lists.js';
import { listHref, modeOf, pauseHref, StatusBadge } from './pauses.js';
import { type SignedIn, signedInOf } from './session.js';
import { DeliveryCells } from './webhook.js';
import { webhookHref } from './webhooks.js';

// One pause: the question, its outcome, the links to answer it, reviewers and
// their votes, notifications and the timeline, read through the same actions
// as GET /v1/pause/{id} and /timeline. Another developer's pause is a 404.

/** The developer's pause in either mode (the hint first), or undefined. */
export async function findOwnedPause(
  services: Parameters<typeof readOwnedPause>[0],
  developerId: string,
  id: string,
  hint: Mode,
): Promise<PresentedPause | undefined> {
  return inEitherMode(hint, (mode) => readOwnedPause(services, { developerId, mode }, id));
}

export const notFoundPage = (signedIn: SignedIn | undefined) =>
  documentOf(
    <ErrorPage title="Pause not found" message="There is no such pause in your account." signedIn={signedIn} />,
  );

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** What a timeline entry says, in a line. */
function describe(entry: TimelineEntry): { what: string; detail?: string } {
  const d = entry.detail;
  switch (entry.type) {
    case 'created': {
      const reviewers = Number(d.reviewers ?? 0);
      return {
        what: 'Created',
        ...(reviewers > 0 ? { detail: `${reviewers} reviewer${reviewers === 1 ? '' : 's'}, quorum ${d.quorum}` } : {}),
      };
    }
    case 'escalated': {
      const emails = Array.isArray(d.reviewers) ? d.reviewers.map((r: { email?: string }) => r.email).join(', ') : '';
      return { what: 'Escalated', detail: emails };
    }
    case 'reminded':
      return { what: 'Reminder queued', detail: `${text(d.channel)} to ${text(d.to)}` };
    case 'notified':
      return {
        what: d.status === 'suppressed' ? 'Notification suppressed (test mode)' : 'Notified',
        detail: `${text(d.channel)} to ${text(d.to)}`,
      };
    case 'notification_failed':
      return { what: 'Notification failed', detail: `${text(d.channel)} to ${text(d.to)}: ${text(d.error)}` };
    case 'voted':
      return {
        what: `${entry.actor.email ?? 'A reviewer'} voted “${text(d.choice)}”`,
        ...(d.text ? { detail: text(d.text) } : {}),
      };
    case 'responded':
      return {
        what: `Responded “${text(d.choice) || '(text only)'}”${entry.actor.email ? ` (${entry.actor.email})` : ''}`,
        ...(d.text ? { detail: text(d.text) } : {}),
      };
    case 'timed_out':
      return { what: 'Timed out', detail: d.choice ? `Default answer “${text(d.choice)}”` : 'No default answer' };
    case 'cancelled':
      return { what: 'Cancelled by the developer' };
  }
}

const NOTIFICATION_STATUS_LABEL: Record<PresentedNotification['status'], string> = {
  pending: 'Pending',
  sent: 'Sent',
  failed: 'Failed',
  suppressed: 'Suppressed',
};

/** A cross beside "failed" so that it does not rest on colour alone; the word is what is read out. */
const FailedMark = () => <span aria-hidden="true">✕ </span>;

const NotificationStatus = ({ status }: { status: PresentedNotification['status'] }) => (
  <span class={`status ${status}`}>
    {status === 'failed' && <FailedMark />}
    {NOTIFICATION_STATUS_LABEL[status]}
  </span>
);

/** A notification of the pause: its status, its error, and for a failed one a button to send it again. */
function NotificationItem(props: {
  notification: PresentedNotification;
  pause: PresentedPause;
  csrf: string;
  preview: NotificationPreview | undefined;
}) {
  const { notification: n, pause, csrf, preview } = props;
  return (
    <li id={n.id}>
      <NotificationStatus status={n.status} /> {`${n.channel} to ${n.to}`}
      {n.attempts > 1 && <span class="muted">{` after ${n.attempts} attempts`}</span>}
      {n.last_error && <div class={n.status === 'failed' ? 'error-text' : 'muted'}>{n.last_error}</div>}
      {n.status === 'failed' && pause.status === 'pending' && (
        <form method="post" action={`/console/pauses/${pause.id}/notifications/${n.id}/retry`}>
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="mode" value={pause.mode} />
          <button type="submit" class="small" aria-label={`Send again: ${n.channel} to ${n.to}`}>
            Send again
          </button>
        </form>
      )}
      {preview && (
        <details>
          <summary>Preview what would have been sent</summary>
          <dl class="facts">
            {preview.subject !== null && (
              <>
                <dt>Subject</dt>
                <dd>{preview.subject}</dd>
              </>
            )}
            <dt>To</dt>
            <dd>{preview.to}</dd>
          </dl>
          <pre class="preview">{preview.text}</pre>
        </details>
      )}
    </li>
  );
}

/** When an open pause expires; when a finished one was answered, cancelled or expired. */
function Ending({ pause }: { pause: PresentedPause }) {
  const [label, at] =
    pause.status === 'pending'
      ? ['Expires', pause.expires_at]
      : pause.status === 'responded'
        ? ['Answered', pause.response?.response_at ?? pause.updated_at]
        : pause.status === 'timed_out'
          ? ['Expired', pause.expires_at]
          : ['Cancelled', pause.updated_at];
  return (
    <>
      <dt>{label}</dt>
      <dd>
        <Time at={at} />
      </dd>
    </>
  );
}

interface PauseProps {
  signedIn: SignedIn;
  pause: PresentedPause;
  timeline: TimelineEntry[];
  deliveries: DeliveryOfPause[];
  /** Suppressed notifications' content, by notification id. */
  previews: Map<string, NotificationPreview>;
  apiUrl: string;
  notice?: string;
  error?: string;
}

export function PauseView({ signedIn, pause, timeline, deliveries, previews, apiUrl, notice, error }: PauseProps) {
  const listLink = listHref({ mode: pause.mode });
  const untold = nobodyTold(pause.notifications);
  return (
    <Layout title={pause.title} signedIn={signedIn} section="pauses">
      <p>
        <a href={listLink}>← {pause.mode === 'live' ? 'Live' : 'Test'} pauses</a>
      </p>
      {notice && <Notice kind="ok">{notice}</Notice>}
      {error && <Notice kind="error">{error}</Notice>}
      {untold && (
        <Notice kind="error">
          Nobody was told of this pause: every notification failed. <a href="#notifications">Send them again</a>, or
          share the link yourself.
        </Notice>
      )}
      <div class="card">
        <p class="eyebrow">{pause.mode === 'live' ? 'Live pause' : 'Test pause'}</p>
        <h1>{pause.title}</h1>
        <p>
          <StatusBadge status={pause.status} />
        </p>
        {pause.body && <p class="body">{pause.body}</p>}
        <dl class="facts">
          <dt>Options</dt>
          <dd>{pause.options.length > 0 ? pause.options.join(' · ') : 'None (text answer)'}</dd>
          <dt>Text answer</dt>
          <dd>{pause.allow_text ? 'Allowed' : 'Not asked for'}</dd>
          <dt>Created</dt>
          <dd>
            <Time at={pause.created_at} />
          </dd>
          <Ending pause={pause} />
          <dt>If it times out</dt>
          <dd>{pause.timeout_default ? `“${pause.timeout_default}”` : 'No default answer'}</dd>
        </dl>
        {pause.status === 'pending' && (
          <p>
            <a
              class="button danger"
              href={`/console/pauses/${pause.id}/cancel${pause.mode === 'test' ? '?mode=test' : ''}`}
            >
              Cancel this pause…
            </a>
          </p>
        )}
      </div>
      <div class="grid">
        <div>
          {pause.response && (
            <section class="card" aria-labelledby="outcome">
              <h2 id="outcome">Outcome</h2>
              <dl class="facts">
                <dt>Choice</dt>
                <dd>{pause.response.choice ?? '—'}</dd>
                {pause.response.text && (
                  <>
                    <dt>Text</dt>
                    <dd class="body">{pause.response.text}</dd>
                  </>
                )}
                {pause.form && pause.response.values && (
                  <>
                    <dt>Values</dt>
                    <dd>
                      <FormValues
                        form={pause.form}
                        values={pause.response.values}
                        label={pause.response.edited ? 'Edited' : 'Kept'}
                      />
                    </dd>
                  </>
                )}
                {pause.response.responded_by && (
                  <>
                    <dt>Decided by</dt>
                    <dd>{pause.response.responded_by.email}</dd>
                  </>
                )}
                <dt>At</dt>
                <dd>
                  <Time at={pause.response.response_at} />
                </dd>
              </dl>
            </section>
          )}
          {pause.reviewers.length > 0 && (
            <section class="card" aria-labelledby="reviewers">
              <h2 id="reviewers">Reviewers and votes</h2>
              <p class="muted">
                Quorum {pause.quorum}
                {pause.veto.length > 0
                  ? `; a vote for ${pause.veto.map((v) => `“${v}”`).join(' or ')} decides at once`
                  : ''}
              </p>
              <table class="reviewers">
                <thead>
                  <tr>
                    <th scope="col">Reviewer</th>
                    <th scope="col">Vote</th>
                  </tr>
                </thead>
                <tbody>
                  {pause.reviewers.map((reviewer) => (
                    <tr>
                      <td>
                        {reviewer.name ? `${reviewer.name} <${reviewer.email}>` : reviewer.email}
                        {reviewer.added_by === 'escalation' && <span class="muted"> (escalation)</span>}
                      </td>
                      <td>
                        {reviewer.vote ? (
                          <>
                            “{reviewer.vote.choice}” <Time at={reviewer.vote.voted_at} />
                            {reviewer.vote.text && <div class="muted">{reviewer.vote.text}</div>}
                            {pause.form && reviewer.vote.values && (
                              <FormValues form={pause.form} values={reviewer.vote.values} label="Values" />
                            )}
                          </>
                        ) : (
                          <span class="muted">No vote yet</span>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          )}
          <section class="card" aria-labelledby="timeline">
            <h2 id="timeline">Timeline</h2>
            <ol class="timeline">
              {timeline.map((entry) => {
                const { what, detail } = describe(entry);
                const failed = entry.type === 'notification_failed';
                return (
                  <li class={failed ? 'failed' : undefined}>
                    <div class="what">
                      {failed && <FailedMark />}
                      {what}
                    </div>
                    {detail && <div class="detail">{detail}</div>}
                    <div class="detail">
                      <Time at={entry.at} />
                    </div>
                  </li>
                );
              })}
            </ol>
          </section>
        </div>
        <div>
          <section class="card" aria-labelledby="links">
            <h2 id="links">Links</h2>
            {pause.response_url && (
              <>
                <p class="label">Response page</p>
                <Copyable value={pause.response_url} label="the response page link" short />
              </>
            )}
            {pause.reviewers.map((reviewer) => (
              <>
                <p class="label">{`${reviewer.email}’s link`}</p>
                <Copyable value={reviewer.response_url} label={`${reviewer.email}’s link`} short />
              </>
            ))}
            <p class="label">Pause id</p>
            <Copyable value={pause.id} label="the pause id" />
            <p class="label">API</p>
            <Copyable value={apiUrl} label="the API address" short />
          </section>
          <section class="card" aria-labelledby="notifications">
            <h2 id="notifications">Notifications</h2>
            {pause.notifications.length === 0 ? (
              <p class="muted">None.</p>
            ) : (
              <ul class="notifications">
                {pause.notifications.map((n) => (
                  <NotificationItem notification={n} pause={pause} csrf={signedIn.csrf} preview={previews.get(n.id)} />
                ))}
              </ul>
            )}
          </section>
        </div>
      </div>
      <section class="card" aria-labelledby="deliveries">
        <h2 id="deliveries">Webhook deliveries</h2>
        {deliveries.length === 0 ? (
          <p class="muted">None: no webhook of this mode was subscribed to this pause's events.</p>
        ) : (
          <table class="stack">
            <caption class="muted">The deliveries of this pause's events, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Webhook</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last result</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <tr>
                  <td data-label="Event">{delivery.type}</td>
                  <td data-label="Webhook" class="title">
                    <a
                      class="parts"
                      href={`${webhookHref({ id: delivery.webhook_id, mode: pause.mode })}#${delivery.id}`}
                    >
                      <Breakable parts={urlParts(delivery.url)} />
                    </a>
                  </td>
                  <DeliveryCells delivery={delivery} />
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </Layout>
  );
}

export async function renderPause(
  services: Pick<ServiceContext, 'store' | 'clock' | 'keys' | 'publicBaseUrl'>,
  signedIn: SignedIn,
  pause: PresentedPause,
  messages: { notice?: string; error?: string } = {},
): Promise<string> {
  const owner = { developerId: signedIn.developer.id, mode: pause.mode };
  const suppressed = pause.notifications.some((n) => n.status === 'suppressed');
  const [timeline, deliveries, previews] = await Promise.all([
    pauseTimeline(services, owner, pause.id),
    listOwnedPauseDeliveries(services, owner, pause.id),
    suppressed ? previewSuppressed(services, owner, pause.id) : new Map<string, NotificationPreview>(),
  ]);
  const apiUrl = `${services.publicBaseUrl}/v1/pause/${pause.id}`;
  return documentOf(
    <PauseView
      signedIn={signedIn}
      pause={pause}
      timeline={timeline}
      deliveries={deliveries}
      previews={previews}
      apiUrl={apiUrl}
      {...messages}
    />,
  );
}

export function pausePage(app: FastifyInstance): void {
  app.get('/pauses/:id', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const { id } = request.params as { id: string };
    const query = request.query as Record<string, unknown>;
    const pause = await findOwnedPause(app.services, signedIn.developer.id, id, modeOf(query.mode));
    if (!pause) return reply.code(404).type('text/html; charset=utf-8').send(notFoundPage(signedIn));
    const notice =
      query.cancelled === '1'
        ? 'The pause is cancelled.'
        : query.resent === '1'
          ? 'The notification is queued to be sent again.'
          : undefined;
    return reply
      .type('text/html; charset=utf-8')
      .send(await renderPause(app.services, signedIn, pause, notice ? { notice } : {}));
  });

  app.post(
    '/pauses/:id/notifications/:notification/retry',
    { config: { console: 'signed-in' } },
    async (request, reply) => {
      const signedIn = signedInOf(request)!;
      const { id, notification } = request.params as { id: string; notification: string };
      const owner = { developerId: signedIn.developer.id, mode: modeOf(field(request.body, 'mode')) };
      try {
        await resendNotification(app.services, owner, id, notification);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        const pause = error.code === 'not_found' ? undefined : await readOwnedPause(app.services, owner, id);
        if (!pause) return reply.code(404).type('text/html; charset=utf-8').send(notFoundPage(signedIn));
        return reply
          .code(error.status)
          .type('text/html; charset=utf-8')
          .send(await renderPause(app.services, signedIn, pause, { error: error.message }));
      }
      const href = pauseHref({ id, mode: owner.mode });
      return reply.redirect(`${href}${owner.mode === 'test' ? '&' : '?'}resent=1#${notification}`, 303);
    },
  );
}
