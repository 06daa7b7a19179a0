import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { resumeInboxSession } from '../actions/inbox.js';
import { MAX_POSTED_FORM_BYTES } from '../domain/form-fields.js';
import { installPageGuard } from '../web/session.js';
import { inboxPage } from './inbox.js';
import { documentOf, INBOX_CSS, INBOX_JS, InboxMessage } from './layout.js';
import { INBOX_CSRF, inboxCookie, inboxSessions } from './session.js';
import { signInPages } from './sign-in.js';

// The reviewers' inbox under /inbox: a reviewer signs in with a link emailed
// to them and answers every live question that waits for their vote. It
// stands on the same page machinery as the console (src/web/session.ts) with
// a cookie and a CSRF key of its own: a console session is nothing here, nor
// the reverse.

declare module 'fastify' {
  interface FastifyContextConfig {
    inbox?: 'signed-in';
  }
}

export async function inboxApp(app: FastifyInstance): Promise<void> {
  // Pages for people, not the API: none of them is in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  // A vote's comment may be 10,000 characters, and its form's values 64 KiB as JSON, percent-encoded.
  await app.register(formbody, { bodyLimit: MAX_POSTED_FORM_BYTES });

  installPageGuard(app, {
    sessions: inboxSessions,
    cookie: inboxCookie,
    csrfKey: (services) => services.keys.inboxCsrf,
    csrfPurpose: INBOX_CSRF,
    resume: resumeInboxSession,
    assetsPrefix: '/inbox/assets/',
    needsSession: (request) => request.routeOptions.config.inbox === 'signed-in',
    signInPath: '/inbox/sign-in',
    place: 'inbox',
    errorPage: (request, title, message) =>
      documentOf(<InboxMessage title={title} message={message} signedIn={inboxSessions.signedInOf(request)} />),
  });

  app.get('/assets/inbox.css', (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(INBOX_CSS),
  );
  app.get('/assets/inbox.js', (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(INBOX_JS),
  );

  signInPages(app);
  inboxPage(app);
}
