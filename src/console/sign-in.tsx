import type { FastifyInstance } from 'fastify';
import { authenticateDeveloper, Credentials } from '../actions/accounts.js';
import { startConsoleSession } from '../actions/console-sessions.js';
import { ApiError } from '../errors.js';
import { bodyChecker } from '../http/validation.js';
import { field, formMessage } from './forms.js';
import { documentOf, Layout, Notice } from './layout.js';
import { sessionOf, setSessionCookie, signedInOf } from './session.js';

// Sign-in with the account's email and password (the same accounts and the
// same rules as POST /v1/auth/login, rate limits included). A new session
// replaces any the browser had.

const checkCredentials = bodyChecker<{ email: string; password: string }>(Credentials);

function SignInPage({ email, error, signedOut }: { email?: string; error?: string; signedOut?: boolean }) {
  return (
    <Layout title="Sign in" narrow>
      <h1>Sign in</h1>
      {signedOut && <Notice kind="ok">You are signed out.</Notice>}
      {error && <Notice kind="error">{error}</Notice>}
      <form method="post" action="/console/sign-in" class="card">
        <div class="field">
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required value={email ?? ''} />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required />
        </div>
        <button type="submit" class="primary wide">
          Sign in
        </button>
      </form>
      <p class="muted">
        No account yet? <a href="/console/sign-up">Create one</a>.
      </p>
    </Layout>
  );
}

export function signInPage(app: FastifyInstance): void {
  app.get('/sign-in', async (request, reply) => {
    if (signedInOf(request)) return reply.redirect('/console/pauses', 303);
    const signedOut = (request.query as Record<string, unknown>)['signed-out'] === '1';
    return reply.type('text/html; charset=utf-8').send(documentOf(<SignInPage signedOut={signedOut} />));
  });

  app.post(
    '/sign-in',
    // Per client address, before the body is read, in the API's login budget.
    { onRequest: async (request) => app.rateLimits.auth.hit(`login:ip:${request.ip}`) },
    async (request, reply) => {
      const email = field(request.body, 'email') ?? '';
      const password = field(request.body, 'password') ?? '';
      try {
        const credentials = checkCredentials({ email, password });
        const developer = await authenticateDeveloper(app.services, credentials, (key) =>
          app.rateLimits.login.turn(key),
        );
        const { token } = await startConsoleSession(app.services, developer.id, sessionOf(request));
        setSessionCookie(reply, app.services, token);
        return reply.redirect('/console/pauses', 303);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code === 'rate_limited') throw error;
        const message = error.code === 'invalid_request' ? formMessage(error) : 'The email or password is wrong.';
        return reply
          .code(error.status)
          .type('text/html; charset=utf-8')
          .send(documentOf(<SignInPage email={email} error={message} />));
      }
    },
  );
}
