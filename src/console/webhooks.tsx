import type { FastifyInstance } from 'fastify';
import {
  listOwnedWebhooks,
  type OwnedWebhook,
  readOwnedWebhook,
  registerWebhook,
  removeOwnedWebhook,
} from '../actions/webhooks.js';
import { safeEqual } from '../domain/crypto.js';
import { EVENT_TYPES, type EventType } from '../domain/events.js';
import { newId } from '../domain/ids.js';
import type { Mode } from '../domain/keys.js';
import { MAX_WEBHOOK_URL_INPUT_LENGTH, MAX_WEBHOOKS, newWebhookSecret } from '../domain/webhooks.js';
import { ApiError } from '../errors.js';
import { csrfTokenFor } from '../web/session.js';
import { field } from './forms.js';
import { Breakable, Copyable, documentOf, ErrorPage, Layout, Notice, Time, urlParts } from './layout.js';
import { ActionsHeader, inEitherMode, ModeSwitch } from './lists.js';
import { modeOf } from './pauses.js';
import { type SignedIn, signedInOf } from './session.js';

// The developer's webhooks, one mode at a time, through the same actions as
// /v1/webhooks: add one (the console makes the signing secret and shows it
// once, on the page that answers the form), and remove one in two steps (a
// page that asks, then its form). Each webhook's deliveries are in webhook.tsx.

/** Ticked on a new form: the events that end a pause. */
const DEFAULT_EVENTS: readonly EventType[] = ['pause.responded', 'pause.timed_out', 'pause.cancelled'];
const WEBHOOK_ID = /^wh_[0-9a-z]{26}$/;

export const webhooksHref = (mode: Mode, extra = '') =>
  `/console/webhooks${mode === 'test' ? `?mode=test${extra && `&${extra}`}` : extra && `?${extra}`}`;

export const webhookHref = (webhook: { id: string; mode: Mode }, extra = '') =>
  `/console/webhooks/${webhook.id}${webhook.mode === 'test' ? `?mode=test${extra && `&${extra}`}` : extra && `?${extra}`}`;

/** The developer's webhook in either mode (the hint first), or undefined. */
export async function findOwnedWebhook(
  services: Parameters<typeof readOwnedWebhook>[0],
  developerId: string,
  id: string,
  hint: Mode,
): Promise<OwnedWebhook | undefined> {
  if (!WEBHOOK_ID.test(id)) return undefined;
  return inEitherMode(hint, (mode) => readOwnedWebhook(services, { developerId, mode }, id));
}

export const webhookNotFoundPage = (signedIn: SignedIn | undefined) =>
  documentOf(
    <ErrorPage title="Webhook not found" message="There is no such webhook in your account." signedIn={signedIn} />,
  );

interface AddForm {
  url: string;
  events: readonly string[];
  error?: string | undefined;
}

interface WebhooksProps {
  signedIn: SignedIn;
  mode: Mode;
  /** The id the add form gives the webhook it adds, and the seal that shows this console made it. */
  formId: { id: string; seal: string };
  webhooks: OwnedWebhook[];
  form: AddForm;
  created?: { webhook: OwnedWebhook; secret: string } | undefined;
  notice?: string | undefined;
}

function WebhooksPage({ signedIn, mode, formId, webhooks, form, created, notice }: WebhooksProps) {
  const modeName = mode === 'live' ? 'Live' : 'Test';
  return (
    <Layout title="Webhooks" signedIn={signedIn} section="webhooks">
      <h1>Webhooks</h1>
      <div class="toolbar">
        <ModeSwitch mode={mode} hrefOf={(m) => webhooksHref(m)} />
      </div>
      {notice && <Notice kind="ok">{notice}</Notice>}
      {created && (
        <section class="card secret" aria-labelledby="secret">
          <h2 id="secret">Webhook added: its signing secret</h2>
          <p>
            Every delivery to <strong class="url">{created.webhook.url}</strong> is signed with this secret
            (webhook-signature, which Standard Webhooks libraries verify, and X-Service-Signature). Copy it now: it is
            shown only this once.
          </p>
          <Copyable value={created.secret} label="the signing secret" />
        </section>
      )}
      {webhooks.length === 0 ? (
        <div class="card empty">
          <p>{`No ${mode} webhooks yet.`}</p>
        </div>
      ) : (
        <div class="card">
          <table class="stack">
            <caption class="muted">{`${modeName} webhooks, newest first (at most ${MAX_WEBHOOKS})`}</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Status</th>
                <th scope="col">Events</th>
                <th scope="col">Added</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {webhooks.map((webhook) => (
                <tr>
                  <td class="title" data-label="URL">
                    <a class="parts" href={webhookHref(webhook)}>
                      <Breakable parts={urlParts(webhook.url)} />
                    </a>
                  </td>
                  <td data-label="Status">
                    <WebhookStatusBadge webhook={webhook} />
                  </td>
                  <td data-label="Events">{webhook.events.join(', ')}</td>
                  <td data-label="Added">
                    <Time at={webhook.createdAt} />
                  </td>
                  <td>
                    <a href={`/console/webhooks/${webhook.id}/remove${mode === 'test' ? '?mode=test' : ''}`}>
                      Remove<span class="visually-hidden">{` ${webhook.url}`}</span>…
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section class="card" aria-labelledby="add">
        <h2 id="add">{`Add a ${mode} webhook`}</h2>
        {form.error && <Notice kind="error">{form.error}</Notice>}
        <form method="post" action="/console/webhooks">
          <input type="hidden" name="csrf" value={signedIn.csrf} />
          <input type="hidden" name="mode" value={mode} />
          <input type="hidden" name="webhook_id" value={formId.id} />
          <input type="hidden" name="webhook_id_seal" value={formId.seal} />
          <div class="field">
            <label for="url">URL</label>
            <input
              id="url"
              name="url"
              type="url"
              required
              maxlength={MAX_WEBHOOK_URL_INPUT_LENGTH}
              value={form.url}
              placeholder="https://example.com/hooks/pausepoint"
              aria-describedby="url-hint"
            />
            <p class="hint" id="url-hint">
              https:// and a public address. The signing secret is made for you and shown once.
            </p>
          </div>
          <fieldset class="field">
            <legend>Events</legend>
            {EVENT_TYPES.map((type) => (
              <div class="check">
                <input
                  type="checkbox"
                  id={`event-${type}`}
                  name={`event:${type}`}
                  value="on"
                  checked={form.events.includes(type)}
                />
                <label for={`event-${type}`}>{type}</label>
              </div>
            ))}
          </fieldset>
          <button type="submit" class="primary">
            Add the webhook
          </button>
        </form>
      </section>
    </Layout>
  );
}

function ConfirmRemovePage({ signedIn, webhook }: { signedIn: SignedIn; webhook: OwnedWebhook }) {
  return (
    <Layout title="Remove the webhook?" signedIn={signedIn} section="webhooks" narrow>
      <div class="card">
        <p class="eyebrow">Remove the webhook?</p>
        <h1 class="url">{webhook.url}</h1>
        <p>
          No more events are sent to it, and its deliveries, pending ones included, are dropped. This cannot be undone.
        </p>
        <form method="post" action={`/console/webhooks/${webhook.id}/remove`}>
          <input type="hidden" name="csrf" value={signedIn.csrf} />
          <input type="hidden" name="mode" value={webhook.mode} />
          <p>
            <button type="submit" class="danger primary wide">
              Remove the webhook
            </button>
          </p>
        </form>
        <p>
          <a href={webhookHref(webhook)}>No, keep it</a>
        </p>
      </div>
    </Layout>
  );
}

const html = 'text/html; charset=utf-8';

export function webhooksPage(app: FastifyInstance): void {
  const owned = (signedIn: SignedIn, mode: Mode) => ({ developerId: signedIn.developer.id, mode });
  const formIdSeal = (signedIn: SignedIn, id: string) =>
    csrfTokenFor(app.services.keys.consoleCsrf, `webhook-form:${id}`, signedIn.session.id);

  /** The list and the form, for the owner's mode; the form empty unless it is given back with an error. */
  async function render(
    signedIn: SignedIn,
    mode: Mode,
    extra: { form?: AddForm; created?: WebhooksProps['created']; notice?: string | undefined } = {},
  ): Promise<string> {
    const webhooks = await listOwnedWebhooks(app.services, owned(signedIn, mode));
    const form = extra.form ?? { url: '', events: DEFAULT_EVENTS };
    const id = newId('wh');
    return documentOf(
      <WebhooksPage
        signedIn={signedIn}
        mode={mode}
        formId={{ id, seal: formIdSeal(signedIn, id) }}
        webhooks={webhooks}
        form={form}
        created={extra.created}
        notice={extra.notice}
      />,
    );
  }

  app.get('/webhooks', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const query = request.query as Record<string, unknown>;
    const notice = query.removed === '1' ? 'The webhook is removed.' : undefined;
    return reply.type(html).send(await render(signedIn, modeOf(query.mode), { notice }));
  });

  app.post('/webhooks', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const mode = modeOf(field(request.body, 'mode'));
    const url = (field(request.body, 'url') ?? '').trim();
    const events = EVENT_TYPES.filter((type) => field(request.body, `event:${type}`) !== undefined);
    const secret = newWebhookSecret();
    // The id the form was shown with: the same form sent again (a reload) adds nothing. Only an id
    // this console sealed for this session counts, so no one picks an id (or probes another's).
    const given = field(request.body, 'webhook_id');
    const sealed = given && WEBHOOK_ID.test(given) && field(request.body, 'webhook_id_seal');
    const id = sealed && safeEqual(sealed, formIdSeal(signedIn, given)) ? given : undefined;
    try {
      const webhook = await registerWebhook(app.services, owned(signedIn, mode), { url, events, secret }, { id });
      return reply
        .code(201)
        .type(html)
        .send(await render(signedIn, mode, { created: { webhook, secret } }));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const message =
        error.code === 'invalid_events' && events.length === 0 ? 'Tick at least one event.' : error.message;
      return reply
        .code(error.status)
        .type(html)
        .send(await render(signedIn, mode, { form: { url, events, error: message } }));
    }
  });

  app.get('/webhooks/:id/remove', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const { id } = request.params as { id: string };
    const mode = modeOf((request.query as Record<string, unknown>).mode);
    const webhook = await findOwnedWebhook(app.services, signedIn.developer.id, id, mode);
    if (!webhook) return reply.code(404).type(html).send(webhookNotFoundPage(signedIn));
    return reply.type(html).send(documentOf(<ConfirmRemovePage signedIn={signedIn} webhook={webhook} />));
  });

  app.post('/webhooks/:id/remove', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const { id } = request.params as { id: string };
    const mode = modeOf(field(request.body, 'mode'));
    try {
      await removeOwnedWebhook(app.services, owned(signedIn, mode), id);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') {
        return reply.code(404).type(html).send(webhookNotFoundPage(signedIn));
      }
      throw error;
    }
    return reply.redirect(webhooksHref(mode, 'removed=1'), 303);
  });
}

/** A webhook's status: Active or Disabled (its page says why). */
export const WebhookStatusBadge = ({ webhook }: { webhook: Pick<OwnedWebhook, 'status' | 'disabledReason'> }) =>
  webhook.status === 'active' ? (
    <span class="status succeeded">Active</span>
  ) : (
    <span class="status failed">Disabled</span>
  );
