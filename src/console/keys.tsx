import type { FastifyInstance, FastifyReply } from 'fastify';
import { keysOf, type RotatedKey, rotateDeveloperKey } from '../actions/keys.js';
import type { Mode } from '../domain/keys.js';
import type { KeySummary } from '../store/accounts.js';
import { field } from './forms.js';
import { Breakable, documentOf, ErrorPage, keyParts, Layout, Notice, Time } from './layout.js';
import { type SignedIn, signedInOf } from './session.js';

// The developer's two API keys, by their prefixes only (only a key's hash is
// stored), and rotating one: a confirmation page, then a POST (with the CSRF
// token and the prefix the page showed) through the same action as
// POST /v1/auth/keys/rotate. The new key is in that POST's answer only
// (no-store, like every console page): sent again, the form finds the key
// already replaced and rotates nothing, so a reload never shows a key.

const MODE_LABEL: Record<Mode, string> = { live: 'Live', test: 'Test' };
const modeParam = (value: unknown): Mode | undefined => (value === 'live' || value === 'test' ? value : undefined);
const rotateHref = (mode: Mode) => `/console/keys/${mode}/rotate`;

const html = (reply: FastifyReply) => reply.type('text/html; charset=utf-8');

function KeysPage({ signedIn, keys }: { signedIn: SignedIn; keys: KeySummary[] }) {
  return (
    <Layout title="API keys" signedIn={signedIn} section="keys">
      <h1>API keys</h1>
      <p class="muted">
        A key is shown in full only once, when it is made; pausepoint keeps only its hash, so here you see the start of
        each. Lost one? Rotate it: you get a new key and the old one stops working.
      </p>
      <div class="card">
        <table class="keys">
          <caption class="muted">Your keys, one per mode</caption>
          <thead>
            <tr>
              <th scope="col">Mode</th>
              <th scope="col">Key</th>
              <th scope="col">Since</th>
              <th scope="col">Rotate</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr>
                <th scope="row">{MODE_LABEL[key.mode]}</th>
                <td>
                  <code>{`${key.prefix}…`}</code>
                </td>
                <td>
                  {key.created_at === signedIn.developer.created_at ? 'Created ' : 'Rotated '}
                  <Time at={key.created_at} />
                </td>
                <td>
                  <a href={rotateHref(key.mode)}>{`Rotate the ${key.mode} key…`}</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted">
        Test keys see only test pauses and never notify a person; live pauses count against your plan.
      </p>
    </Layout>
  );
}

function ConfirmPage({ signedIn, current }: { signedIn: SignedIn; current: KeySummary }) {
  return (
    <Layout title={`Rotate the ${current.mode} key?`} signedIn={signedIn} section="keys" narrow>
      <div class="card">
        <h1>{`Rotate the ${current.mode} key?`}</h1>
        <p>
          The key starting <code>{current.prefix}</code> stops working at once: every program using it gets 401 until
          you give it the new key, which is shown on the next page only once.
        </p>
        <form method="post" action={rotateHref(current.mode)}>
          <input type="hidden" name="csrf" value={signedIn.csrf} />
          <input type="hidden" name="prefix" value={current.prefix} />
          <p>
            <button type="submit" class="danger primary wide">
              {`Rotate the ${current.mode} key`}
            </button>
          </p>
        </form>
        <p>
          <a href="/console/keys">No, keep it</a>
        </p>
      </div>
    </Layout>
  );
}

function NewKeyPage({ signedIn, rotated, old }: { signedIn: SignedIn; rotated: RotatedKey; old: string }) {
  return (
    <Layout title={`New ${rotated.mode} key`} signedIn={signedIn} section="keys">
      <h1>{`Your new ${rotated.mode} key`}</h1>
      <div class="card keys">
        <Notice kind="ok">Copy it now: it is shown only this once (only its hash is kept).</Notice>
        <p class="copy">
          <code id="new-key" data-copy="" data-copy-label={`the new ${rotated.mode} key`}>
            <Breakable parts={keyParts(rotated.key)} />
          </code>
        </p>
        <p class="warning">
          The old key starting <code>{old}</code> no longer works: programs still using it get 401.
        </p>
      </div>
      <p>
        <a class="button primary" href="/console/keys">
          Back to your keys
        </a>
      </p>
    </Layout>
  );
}

const REFUSALS = {
  rotated: {
    status: 409,
    title: 'Key already rotated',
    message:
      'This key was already replaced (was the form sent twice?). The new key was shown once and cannot be shown again: if you did not copy it, rotate the key again.',
  },
  incomplete: {
    status: 400,
    title: 'That did not work',
    message: 'The form does not say which key to replace: go back to your keys and try again.',
  },
  missing: { status: 404, title: 'Not found', message: 'There is nothing here.' },
} as const;

const refuse = (reply: FastifyReply, signedIn: SignedIn, why: keyof typeof REFUSALS) => {
  const { status, title, message } = REFUSALS[why];
  return html(reply)
    .code(status)
    .send(documentOf(<ErrorPage title={title} message={message} signedIn={signedIn} />));
};

export function keysPage(app: FastifyInstance): void {
  app.get('/keys', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const keys = await keysOf(app.services, signedIn.developer.id);
    return html(reply).send(documentOf(<KeysPage signedIn={signedIn} keys={keys} />));
  });

  app.get('/keys/:mode/rotate', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const mode = modeParam((request.params as { mode: string }).mode);
    const keys = await keysOf(app.services, signedIn.developer.id);
    const current = keys.find((key) => key.mode === mode);
    if (!current) return refuse(reply, signedIn, 'missing');
    return html(reply).send(documentOf(<ConfirmPage signedIn={signedIn} current={current} />));
  });

  app.post('/keys/:mode/rotate', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const mode = modeParam((request.params as { mode: string }).mode);
    if (!mode) return refuse(reply, signedIn, 'missing');
    // The key the confirmation page showed: without it, nothing says which one the person agreed to replace.
    const prefix = field(request.body, 'prefix');
    if (!prefix) return refuse(reply, signedIn, 'incomplete');
    const rotated = await rotateDeveloperKey(app.services, {
      developerId: signedIn.developer.id,
      mode,
      currentPrefix: prefix,
    });
    if (!rotated) return refuse(reply, signedIn, 'rotated');
    return html(reply).send(documentOf(<NewKeyPage signedIn={signedIn} rotated={rotated} old={prefix} />));
  });
}
