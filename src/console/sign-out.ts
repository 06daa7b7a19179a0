import type { FastifyInstance } from 'fastify';
import { endConsoleSession } from '../actions/console-sessions.js';
import { clearSessionCookie, signedInOf } from './session.js';

// Sign-out deletes the session row, so it ends on every instance at once
// (the CSRF check before this handler keeps other sites from signing people out).

export function signOut(app: FastifyInstance): void {
  app.post('/sign-out', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request);
    if (signedIn) await endConsoleSession(app.services, signedIn.session);
    clearSessionCookie(reply, app.services);
    return reply.redirect('/console/sign-in?signed-out=1', 303);
  });
}
