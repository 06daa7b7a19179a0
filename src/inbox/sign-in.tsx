import type { FastifyInstance, FastifyReply } from 'fastify';
import { inboxLinkIsUsable, requestInboxLink, signInWithLink } from '../actions/inbox.js';
import { documentOf, InboxLayout, InboxMessage } from './layout.js';
import { inboxCookie, inboxSessions } from './session.js';

// Signing in by email link. Asking for a link always gets the same page,
// whatever the address (only an address that is a reviewer of a live pause
// is sent one). Opening the link only shows a button: mail scanners open
// links, and a GET must not use it up. The POST uses it (once) and starts a
// session.

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;
const TOKEN = /^svc_inboxlink_[0-9a-f]{48}$/;
const html = (reply: FastifyReply) => reply.type('text/html; charset=utf-8');

function SignInPage({ error, email, signedOut }: { error?: string; email?: string; signedOut?: boolean }) {
  return (
    <InboxLayout title="Sign in">
      <h1>Your questions to answer</h1>
      {signedOut && (
        <p class="notice ok" role="status">
          You are signed out.
        </p>
      )}
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
      <form method="post" action="/inbox/sign-in" class="card">
        <label for="email">Your email address</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="email"
          required
          value={email ?? ''}
          aria-describedby="email-hint"
        />
        <p class="hint" id="email-hint">
          We email you a link that signs you in. It works once, for 15 minutes.
        </p>
        <button type="submit" class="primary">
          Email me a sign-in link
        </button>
      </form>
    </InboxLayout>
  );
}

const linkUsedUp = () => (
  <InboxMessage
    title="This link does not work any more"
    message="A sign-in link works once, for 15 minutes. This one has been used or has expired."
  >
    <p>
      <a href="/inbox/sign-in">Ask for a new link</a>
    </p>
  </InboxMessage>
);

export function signInPages(app: FastifyInstance): void {
  const { signedInOf } = inboxSessions;
  const limitByAddress = async (request: { ip: string }) => app.rateLimits.auth.hit(`inbox:ip:${request.ip}`);

  app.get('/sign-in', async (request, reply) => {
    if (signedInOf(request)) return reply.redirect('/inbox', 303);
    const signedOut = (request.query as Record<string, unknown>)['signed-out'] === '1';
    return html(reply).send(documentOf(<SignInPage signedOut={signedOut} />));
  });

  app.post('/sign-in', { onRequest: limitByAddress }, async (request, reply) => {
    const raw = (request.body as Record<string, unknown> | undefined)?.email;
    const email = typeof raw === 'string' ? raw.trim() : '';
    if (!EMAIL.test(email)) {
      return html(reply)
        .code(400)
        .send(documentOf(<SignInPage email={email} error="Enter a valid email address." />));
    }
    // Per address, in the API's login back-off: nobody floods one inbox with links.
    await app.rateLimits.login.turn(`inbox:email:${email.toLowerCase()}`);
    requestInboxLink(app.services, email);
    return html(reply).send(
      documentOf(
        <InboxMessage
          title="Check your email"
          message={`If ${email} has anything waiting for its answer, a sign-in link is on its way. It works once, for 15 minutes.`}
        >
          <p>
            <a href="/inbox/sign-in">Use another address</a>
          </p>
        </InboxMessage>,
      ),
    );
  });

  app.get('/link/:token', { onRequest: limitByAddress }, async (request, reply) => {
    const { token } = request.params as { token: string };
    if (!TOKEN.test(token) || !(await inboxLinkIsUsable(app.services, token))) {
      return html(reply).code(410).send(documentOf(linkUsedUp()));
    }
    return html(reply).send(
      documentOf(
        <InboxLayout title="Sign in">
          <div class="card">
            <h1>Sign in to your inbox</h1>
            <p>Press the button to sign in on this device.</p>
            <form method="post" action={`/inbox/link/${token}`}>
              <button type="submit" class="primary">
                Sign in
              </button>
            </form>
          </div>
        </InboxLayout>,
      ),
    );
  });

  app.post('/link/:token', { onRequest: limitByAddress }, async (request, reply) => {
    const { token } = request.params as { token: string };
    const started = TOKEN.test(token)
      ? await signInWithLink(app.services, token, signedInOf(request)?.session)
      : undefined;
    if (!started) return html(reply).code(410).send(documentOf(linkUsedUp()));
    inboxCookie.set(reply, app.services, started.token);
    return reply.redirect('/inbox', 303);
  });
}
