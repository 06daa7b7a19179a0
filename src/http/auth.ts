import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isoTime } from '../domain/clock.js';
import type { Mode } from '../domain/keys.js';
import { parseCredential } from '../domain/keys.js';
import { ApiError } from '../errors.js';
import { findApiKey, findSession } from '../store/accounts.js';
import type { Store } from '../store/store.js';
import { ApiKeyCache, type KnownKey } from './api-key-cache.js';

// Authentication for every /v1 endpoint. A route is protected by an API key
// unless its config says otherwise, so a new route cannot be public by mistake:
//   config: { auth: 'none' }            the six public endpoints (README, API reference)
//   config: { auth: 'key_or_session' }  me and rotate, reachable after login

export type AuthPolicy = 'none' | 'key' | 'key_or_session';

export interface Principal {
  developerId: string;
  /** The mode of the key presented; null for a login session. */
  mode: Mode | null;
  via: 'api_key' | 'session';
  /** SHA-256 of the credential presented. */
  credentialHash: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthPolicy;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const unauthorized = (message: string) => new ApiError('unauthorized', message);

async function authenticate(
  app: FastifyInstance,
  keys: ApiKeyCache,
  request: FastifyRequest,
  policy: AuthPolicy,
): Promise<Principal> {
  const header = request.headers.authorization;
  if (!header) throw unauthorized('Send your API key as Authorization: Bearer <key>.');
  const match = /^Bearer +(\S+) *$/i.exec(header);
  const credential = match?.[1] ? parseCredential(match[1]) : null;
  if (!credential) throw unauthorized('The Authorization header does not hold a pausepoint API key.');

  const { store } = app.services;
  if (credential.kind === 'api_key') {
    const key = keys.get(credential.hash) ?? (await lookUpApiKey(store, keys, credential.hash));
    if (!key || key.mode !== credential.mode) throw unauthorized('The API key is invalid or has been rotated.');
    return { developerId: key.developerId, mode: key.mode, via: 'api_key', credentialHash: credential.hash };
  }
  if (policy !== 'key_or_session') {
    throw unauthorized('A login session works only for /v1/auth/me and /v1/auth/keys/rotate; use an API key.');
  }
  const session = await findSession(store, credential.hash, isoTime(app.services.clock.now()));
  if (!session) throw unauthorized('The session has expired; log in again.');
  return { developerId: session.developer_id, mode: null, via: 'session', credentialHash: credential.hash };
}

async function lookUpApiKey(store: Store, keys: ApiKeyCache, keyHash: string): Promise<KnownKey | undefined> {
  const startedAt = keys.startLookup();
  const row = await findApiKey(store, keyHash);
  if (!row) return undefined;
  const key = { developerId: row.developer_id, mode: row.mode };
  keys.remember(keyHash, key, startedAt);
  return key;
}

/** Adds the authentication hook to this plugin scope (the /v1 API). */
export function installAuthentication(app: FastifyInstance): void {
  const { clock, signals } = app.services;
  const keys = new ApiKeyCache(() => clock.now().getTime());
  signals.watchKeyRotations(keys);
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    if (request.is404) return;
    const policy = request.routeOptions.config.auth ?? 'key';
    if (policy === 'none') return;
    request.principal = await authenticate(app, keys, request, policy);
    app.rateLimits.api.hit(rateLimitKey(request.principal));
  });
}

const rateLimitKey = (principal: Principal) => `key:${principal.credentialHash}`;

/**
 * Counts `count` more requests of the caller against its rate limit, on top
 * of the one its HTTP request counted: the further messages of a JSON-RPC
 * batch, each of which is a request of its own. Throws 429 when over.
 */
export function chargeMoreRequests(request: FastifyRequest, count: number): void {
  if (count > 0) request.server.rateLimits.api.charge(count, rateLimitKey(principalOf(request)));
}

/** The authenticated caller of a protected route. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.routeOptions.url} has no authentication`);
  return request.principal;
}

/** The caller of a key-only route, whose mode is always known. */
export function keyHolderOf(request: FastifyRequest): Principal & { mode: Mode } {
  const principal = principalOf(request);
  if (principal.mode === null) throw new Error(`route ${request.routeOptions.url} accepted a session`);
  return principal as Principal & { mode: Mode };
}
