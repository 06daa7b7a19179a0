import Type from 'typebox';
import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { MAX_EMAIL_LENGTH, normaliseEmail } from '../domain/email.js';
import type { IssuedSecret, Mode } from '../domain/keys.js';
import {
  DUMMY_PASSWORD_HASH,
  hashPassword,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  verifyPassword,
} from '../domain/passwords.js';
import { ApiError } from '../errors.js';
import {
  createDeveloper,
  createSession,
  type Developer,
  findDeveloperByEmail,
  getDeveloper,
  type KeySummary,
  listKeys,
} from '../store/accounts.js';
import { isUniqueViolation } from '../store/errors.js';
import { usageThisMonth } from './usage.js';

// Signing up and signing in, for the API (POST /v1/auth/register and /login)
// and the console alike: one set of rules for both. The callers check their
// input against `Credentials` and apply the rate limits the callbacks name.

/** An email and a password, as both the API and the console's forms take them. */
export const Credentials = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: MAX_EMAIL_LENGTH }),
    password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH }),
  },
  { additionalProperties: false, examples: [{ email: 'you@example.com', password: 'a long password' }] },
);

type AccountServices = Pick<ServiceContext, 'store' | 'clock'>;

const emailTaken = () => new ApiError('email_taken', 'An account with this email already exists.');

/**
 * Creates an account on the free plan with a live and a test key (their
 * plaintext is returned only this once). `limit` is called with the
 * account's rate-limit key (`register:email:…`) before anything else.
 */
export async function registerDeveloper(
  services: AccountServices,
  input: { email: string; password: string },
  limit: (key: string) => void,
): Promise<{ developer: Developer; keys: Record<Mode, IssuedSecret> }> {
  const email = normaliseEmail(input.email);
  limit(`register:email:${email}`);
  const { store, clock } = services;
  // A friendly early answer; the unique index settles a race.
  if (await findDeveloperByEmail(store, email)) throw emailTaken();
  const passwordHash = await hashPassword(input.password);
  try {
    return await createDeveloper(store, { email, passwordHash, plan: 'free', now: isoTime(clock.now()) });
  } catch (error) {
    if (isUniqueViolation(error)) throw emailTaken();
    throw error;
  }
}

/**
 * The developer with this email and password, or 401. `waitTurn` is called
 * with the account's back-off key (`login:email:…`, shared by the API and the
 * console) and must resolve before the password is looked at.
 */
export async function authenticateDeveloper(
  services: AccountServices,
  input: { email: string; password: string },
  waitTurn: (key: string) => Promise<void>,
): Promise<Developer> {
  const email = normaliseEmail(input.email);
  // Per account, from any address: a back-off, not a wall (docs/concepts.md, "Accounts and keys").
  await waitTurn(`login:email:${email}`);
  const found = await findDeveloperByEmail(services.store, email);
  // Check a password either way, so an unknown email costs the same time.
  const valid = await verifyPassword(input.password, found?.password_hash ?? DUMMY_PASSWORD_HASH);
  if (!found || !valid) throw new ApiError('unauthorized', 'The email or password is wrong.');
  return { id: found.id, email: found.email, plan: found.plan, created_at: found.created_at };
}

/** How long an API login session lasts. */
export const SESSION_TTL_MS = 60 * 60 * 1000;

/**
 * POST /v1/auth/login: the developer with these credentials (see
 * authenticateDeveloper), their keys, and a new one-hour session.
 */
export async function logIn(
  services: AccountServices,
  input: { email: string; password: string },
  waitTurn: (key: string) => Promise<void>,
): Promise<{ developer: Developer; keys: KeySummary[]; session: { token: string; expires_at: string } }> {
  const { store, clock } = services;
  const developer = await authenticateDeveloper(services, input, waitTurn);
  const now = clock.now();
  const session = await createSession(store, {
    developerId: developer.id,
    now: isoTime(now),
    expiresAt: isoTime(new Date(now.getTime() + SESSION_TTL_MS)),
  });
  return { developer, keys: await listKeys(store, developer.id), session };
}

/** The signed-in developer's account, its keys and this month's usage (GET /v1/auth/me). */
export async function readAccount(services: Pick<ServiceContext, 'store' | 'config' | 'clock'>, developerId: string) {
  const developer = await getDeveloper(services.store, developerId);
  if (!developer) throw new Error('authenticated developer has no row');
  const [usage, keys] = await Promise.all([
    usageThisMonth(services, developer),
    listKeys(services.store, developer.id),
  ]);
  return { developer, usage, keys };
}
