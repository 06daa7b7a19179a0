import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { sha256Hex } from '../domain/crypto.js';
import { type Developer, getDeveloper } from '../store/accounts.js';
import {
  type ConsoleSession,
  createConsoleSession,
  deleteSession,
  extendSession,
  findConsoleSession,
  type SessionTable,
} from '../store/console-sessions.js';

// The console's sessions: 12 h after their last use they end; use moves that
// on, but at most once a minute (a page view is a read, not a write).

export const CONSOLE_SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const CONSOLE_SESSION_EXTEND_EVERY_MS = 60 * 1000;

type SessionServices = Pick<ServiceContext, 'store' | 'clock'>;

/**
 * Starts a session for a developer who just proved who they are. The session
 * the browser came with, if any, ends: a session is never carried across a
 * sign-in (fixation).
 */
export async function startConsoleSession(
  services: SessionServices,
  developerId: string,
  previous: ConsoleSession | undefined,
): Promise<{ token: string; session: ConsoleSession }> {
  if (previous) await deleteSession(services.store, 'console_sessions', previous.id);
  const now = services.clock.now();
  return createConsoleSession(services.store, {
    developerId,
    now: isoTime(now),
    expiresAt: isoTime(new Date(now.getTime() + CONSOLE_SESSION_IDLE_MS)),
  });
}

/**
 * The live session of this cookie token and its developer; the session's idle
 * expiry is moved on if that was last done over a minute ago.
 */
export async function resumeConsoleSession(
  services: SessionServices,
  token: string,
): Promise<{ session: ConsoleSession; developer: Developer } | undefined> {
  const found = await findConsoleSession(services.store, sha256Hex(token), isoTime(services.clock.now()));
  if (!found) return undefined;
  const session = await keepAlive(services, 'console_sessions', found);
  const developer = await getDeveloper(services.store, session.developer_id);
  return developer && { session, developer };
}

/**
 * A session just found, its idle expiry moved on if that was last done over
 * a minute ago (the console's and the reviewers' inbox's sessions alike).
 */
export async function keepAlive<S extends { id: string; last_used_at: string; expires_at: string }>(
  services: SessionServices,
  table: SessionTable,
  session: S,
): Promise<S> {
  const now = services.clock.now();
  if (now.getTime() - Date.parse(session.last_used_at) < CONSOLE_SESSION_EXTEND_EVERY_MS) return session;
  const expiresAt = isoTime(new Date(now.getTime() + CONSOLE_SESSION_IDLE_MS));
  await extendSession(services.store, table, { id: session.id, now: isoTime(now), expiresAt });
  return { ...session, last_used_at: isoTime(now), expires_at: expiresAt };
}

/** Ends the session everywhere: every instance reads the same table. */
export const endConsoleSession = (services: SessionServices, session: ConsoleSession) =>
  deleteSession(services.store, 'console_sessions', session.id);
