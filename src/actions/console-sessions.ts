import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { sha256Hex } from '../domain/crypto.js';
import { type Developer, getDeveloper } from '../store/accounts.js';
import {
  type ConsoleSession,
  createConsoleSession,
  deleteConsoleSession,
  extendConsoleSession,
  findConsoleSession,
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
  if (previous) await deleteConsoleSession(services.store, previous.id);
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
  const now = services.clock.now();
  let session = await findConsoleSession(services.store, sha256Hex(token), isoTime(now));
  if (!session) return undefined;
  if (now.getTime() - Date.parse(session.last_used_at) >= CONSOLE_SESSION_EXTEND_EVERY_MS) {
    const expiresAt = isoTime(new Date(now.getTime() + CONSOLE_SESSION_IDLE_MS));
    await extendConsoleSession(services.store, { id: session.id, now: isoTime(now), expiresAt });
    session = { ...session, last_used_at: isoTime(now), expires_at: expiresAt };
  }
  const developer = await getDeveloper(services.store, session.developer_id);
  return developer && { session, developer };
}

/** Ends the session everywhere: every instance reads the same table. */
export const endConsoleSession = (services: SessionServices, session: ConsoleSession) =>
  deleteConsoleSession(services.store, session.id);
