import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import type { Developer } from '../store/accounts.js';
import type { ConsoleSession } from '../store/console-sessions.js';
import {
  csrfMatchesFor,
  csrfTokenFor,
  isCrossSite,
  requestSessions,
  sessionCookie,
  tokenFromCookie,
} from '../web/session.js';

// The console's cookie and CSRF tokens, on the machinery it shares with the
// reviewers' inbox (src/web/session.ts): its own cookie name and CSRF key.

export { isCrossSite, tokenFromCookie };

export interface SignedIn {
  session: ConsoleSession;
  developer: Developer;
  /** The CSRF token for this session's forms. */
  csrf: string;
}

export const consoleSessions = requestSessions<SignedIn>();
export const signedInOf = consoleSessions.signedInOf;
export const sessionOf = (request: FastifyRequest): ConsoleSession | undefined => signedInOf(request)?.session;

export const consoleCookie = sessionCookie('pausepoint_console');
export const cookieName = consoleCookie.name;

export const setSessionCookie = (reply: FastifyReply, services: Pick<ServiceContext, 'publicBaseUrl'>, token: string) =>
  consoleCookie.set(reply, services, token);
export const clearSessionCookie = (reply: FastifyReply, services: Pick<ServiceContext, 'publicBaseUrl'>) =>
  consoleCookie.clear(reply, services);

export const CONSOLE_CSRF = 'console-csrf';
export const csrfToken = (key: Buffer, sessionId: string): string => csrfTokenFor(key, CONSOLE_CSRF, sessionId);
/** Whether `given` is this session's CSRF token, compared in constant time. */
export const csrfMatches = (key: Buffer, sessionId: string, given: unknown): boolean =>
  csrfMatchesFor(key, CONSOLE_CSRF, sessionId, given);
