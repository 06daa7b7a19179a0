import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { resumeConsoleSession } from '../actions/console-sessions.js';
import { ApiError } from '../errors.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { cancelPausePage } from './cancel-pause.js';
import { field } from './forms.js';
import { keysPage } from './keys.js';
import { documentOf, ErrorPage } from './layout.js';
import { pausePage } from './pause.js';
import { pausesPage } from './pauses.js';
import {
  cookieName,
  csrfMatches,
  csrfToken,
  isCrossSite,
  rememberSignedIn,
  signedInOf,
  tokenFromCookie,
} from './session.js';
import { signInPage } from './sign-in.js';
import { signOut } from './sign-out.js';
import { signUpPage } from './sign-up.js';
import { usagePage } from './usage.js';
import { webhookPage } from './webhook.js';
import { webhooksPage } from './webhooks.js';

// The developers' console under /console: server-rendered pages over the same
// actions as the API. Every page gets the headers below; a route marked
// `console: 'signed-in'` needs a session (a GET is sent to sign-in, a POST
// refused), and its POSTs the session's CSRF token. A POST that a browser
// says came from another site is refused on every route, sign-in included.

declare module 'fastify' {
  interface FastifyContextConfig {
    console?: 'signed-in';
  }
}

const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; " +
  "form-action 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'";

const html = (reply: FastifyReply) => reply.type('text/html; charset=utf-8');

export async function consoleApp(app: FastifyInstance): Promise<void> {
  // Pages for people, not the API: none of them is in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  await app.register(formbody, { bodyLimit: 16 * 1024 });

  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'same-origin');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });

  const forbidden = (request: FastifyRequest, reply: FastifyReply) => {
    const signedIn = signedInOf(request);
    const message = signedIn
      ? 'This form was not sent from this console page, or it is out of date: go back, reload the page and try again.'
      : 'You are not signed in (your session may have ended): sign in, then try again.';
    return html(reply)
      .code(403)
      .send(documentOf(<ErrorPage title="Not allowed" message={message} signedIn={signedIn} />));
  };

  app.addHook('preHandler', async (request, reply) => {
    if (request.url.startsWith('/console/assets/')) return;
    const { services } = app;
    const token = tokenFromCookie(request, cookieName(services));
    if (token) {
      const resumed = await resumeConsoleSession(services, token);
      if (resumed)
        rememberSignedIn(request, { ...resumed, csrf: csrfToken(services.keys.consoleCsrf, resumed.session.id) });
    }
    const isPost = request.method === 'POST';
    if (isPost && isCrossSite(request, services)) return forbidden(request, reply);
    if (request.routeOptions.config.console !== 'signed-in') return;
    const signedIn = signedInOf(request);
    if (!isPost) {
      if (!signedIn) return reply.redirect('/console/sign-in', 303);
      return;
    }
    if (!signedIn || !csrfMatches(services.keys.consoleCsrf, signedIn.session.id, field(request.body, 'csrf'))) {
      return forbidden(request, reply);
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const signedIn = signedInOf(request);
    if (error instanceof ApiError) {
      const title = error.code === 'rate_limited' ? 'Too many attempts' : 'That did not work';
      return html(reply)
        .headers(error.headers ?? {})
        .code(error.status)
        .send(documentOf(<ErrorPage title={title} message={error.message} signedIn={signedIn} />));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return html(reply)
        .code(status)
        .send(
          documentOf(
            <ErrorPage title="That did not work" message="The request could not be read." signedIn={signedIn} />,
          ),
        );
    }
    request.log.error({ err: error }, 'console page failed');
    return html(reply)
      .code(500)
      .send(
        documentOf(
          <ErrorPage
            title="Something went wrong"
            message="Something went wrong on our side; please try again."
            signedIn={signedIn}
          />,
        ),
      );
  });

  app.setNotFoundHandler((request, reply) =>
    html(reply)
      .code(404)
      .send(
        documentOf(<ErrorPage title="Not found" message="There is nothing here." signedIn={signedInOf(request)} />),
      ),
  );

  app.get('/assets/console.css', (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CONSOLE_CSS),
  );
  app.get('/assets/console.js', (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CONSOLE_JS),
  );

  app.get('/', async (request, reply) =>
    reply.redirect(signedInOf(request) ? '/console/pauses' : '/console/sign-in', 303),
  );
  signUpPage(app);
  signInPage(app);
  signOut(app);
  pausesPage(app);
  pausePage(app);
  cancelPausePage(app);
  keysPage(app);
  usagePage(app);
  webhooksPage(app);
  webhookPage(app);
}
