import type { FastifyInstance } from 'fastify';
import { Credentials, registerDeveloper } from '../actions/accounts.js';
import { startConsoleSession } from '../actions/console-sessions.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../domain/passwords.js';
import { ApiError } from '../errors.js';
import { bodyChecker } from '../http/validation.js';
import { field, formMessage } from './forms.js';
import { documentOf, Layout, Notice } from './layout.js';
import { csrfToken, type SignedIn, sessionOf, setSessionCookie, signedInOf } from './session.js';

// Creating an account (the same rules as POST /v1/auth/register), then
// signed in at once, with the two new API keys shown this one time.

const checkCredentials = bodyChecker<{ email: string; password: string }>(Credentials);

function SignUpPage({ email, error }: { email?: string; error?: string }) {
  return (
    <Layout title="Create an account" narrow>
      <h1>Create an account</h1>
      {error && <Notice kind="error">{error}</Notice>}
      <form method="post" action="/console/sign-up" class="card">
        <div class="field">
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required value={email ?? ''} />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="new-password"
            required
            minlength={MIN_PASSWORD_LENGTH}
            maxlength={MAX_PASSWORD_LENGTH}
            aria-describedby="password-hint"
          />
          <p class="hint" id="password-hint">
            {`At least ${MIN_PASSWORD_LENGTH} characters.`}
          </p>
        </div>
        <button type="submit" class="primary wide">
          Create the account
        </button>
      </form>
      <p class="muted">
        Already have one? <a href="/console/sign-in">Sign in</a>.
      </p>
    </Layout>
  );
}

function KeysPage({ signedIn, live, test }: { signedIn: SignedIn; live: string; test: string }) {
  return (
    <Layout title="Your API keys" signedIn={signedIn}>
      <h1>Welcome to pausepoint</h1>
      <div class="card keys">
        <h2>Your API keys</h2>
        <Notice kind="ok">Copy them now: they are shown only this once (only their hash is kept).</Notice>
        <p class="eyebrow">Live key</p>
        <p class="copy">
          <code data-copy="" data-copy-label="the live key">
            {live}
          </code>
        </p>
        <p class="eyebrow">Test key (notifies no human)</p>
        <p class="copy">
          <code data-copy="" data-copy-label="the test key">
            {test}
          </code>
        </p>
      </div>
      <p>
        <a class="button primary" href="/console/pauses">
          Go to your pauses
        </a>
      </p>
    </Layout>
  );
}

export function signUpPage(app: FastifyInstance): void {
  app.get('/sign-up', async (request, reply) => {
    if (signedInOf(request)) return reply.redirect('/console/pauses', 303);
    return reply.type('text/html; charset=utf-8').send(documentOf(<SignUpPage />));
  });

  app.post(
    '/sign-up',
    { onRequest: async (request) => app.rateLimits.auth.hit(`register:ip:${request.ip}`) },
    async (request, reply) => {
      const email = field(request.body, 'email') ?? '';
      const password = field(request.body, 'password') ?? '';
      try {
        const credentials = checkCredentials({ email, password });
        const { developer, keys } = await registerDeveloper(app.services, credentials, (key) =>
          app.rateLimits.auth.hit(key),
        );
        const { token, session } = await startConsoleSession(app.services, developer.id, sessionOf(request));
        setSessionCookie(reply, app.services, token);
        const signedIn = { session, developer, csrf: csrfToken(app.services.keys.consoleCsrf, session.id) };
        return reply
          .code(201)
          .type('text/html; charset=utf-8')
          .send(documentOf(<KeysPage signedIn={signedIn} live={keys.live.plaintext} test={keys.test.plaintext} />));
      } catch (error) {
        if (!(error instanceof ApiError) || error.code === 'rate_limited') throw error;
        return reply
          .code(error.status)
          .type('text/html; charset=utf-8')
          .send(documentOf(<SignUpPage email={email} error={formMessage(error)} />));
      }
    },
  );
}
