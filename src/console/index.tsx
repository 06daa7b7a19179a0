import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { resumeConsoleSession } from '../actions/console-sessions.js';
import { installPageGuard } from '../web/session.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { cancelPausePage } from './cancel-pause.js';
import { keysPage } from './keys.js';
import { documentOf, ErrorPage } from './layout.js';
import { pausePage } from './pause.js';
import { pausesPage } from './pauses.js';
import { CONSOLE_CSRF, consoleCookie, consoleSessions, signedInOf } from './session.js';
import { signInPage } from './sign-in.js';
import { signOut } from './sign-out.js';
import { signUpPage } from './sign-up.js';
import { usagePage } from './usage.js';
import { webhookPage } from './webhook.js';
import { webhooksPage } from './webhooks.js';

// The developers' console under /console: server-rendered pages over the same
// actions as the API. Every page gets the headers, session, CSRF and error
// pages of src/web/session.ts (shared with the reviewers' inbox); a route marked
// `console: 'signed-in'` needs a session (a GET is sent to sign-in, a POST
// refused), and its POSTs the session's CSRF token. A POST that a browser
// says came from another site is refused on every route, sign-in included.

declare module 'fastify' {
  interface FastifyContextConfig {
    console?: 'signed-in';
  }
}

export async function consoleApp(app: FastifyInstance): Promise<void> {
  // Pages for people, not the API: none of them is in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  await app.register(formbody, { bodyLimit: 16 * 1024 });

  installPageGuard(app, {
    sessions: consoleSessions,
    cookie: consoleCookie,
    csrfKey: (services) => services.keys.consoleCsrf,
    csrfPurpose: CONSOLE_CSRF,
    resume: resumeConsoleSession,
    assetsPrefix: '/console/assets/',
    needsSession: (request) => request.routeOptions.config.console === 'signed-in',
    signInPath: '/console/sign-in',
    place: 'console',
    errorPage: (request, title, message) =>
      documentOf(<ErrorPage title={title} message={message} signedIn={signedInOf(request)} />),
  });

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
