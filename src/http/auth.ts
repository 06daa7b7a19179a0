import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { apiKeyOwner, sessionOwner } from '../actions/keys.js';
import type { Mode } from '../domain/keys.js';
import { parseCredential } from '../domain/keys.js';
import { ApiError } from '../errors.js';
import { ApiKeyCache, type KnownKey } from './api-key-cache.js';

// Authentication for every /v1 endpoint. A route is protected by an API key
// unless its config says otherwise, so a new route cannot be public by mistake:
//   config: { auth: 'none' }            the six public endpoints (docs/concepts.md)
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

/** The caller; without an await when the key is cached, as it is for nearly every request. */
function authenticate(
  app: FastifyInstance,
  keys: ApiKeyCache,
  request: FastifyRequest,
  policy: AuthPolicy,
): Principal | Promise<Principal> {
  const header = request.headers.authorization;
  if (!header) throw unauthorized('Send your API key as Authorization: Bearer <key>.');
  const match = /^Bearer +(\S+) *$/i.exec(header);
  const credential = match?.[1] ? parseCredential(match[1]) : null;
  if (!credential) throw unauthorized('The Authorization header does not hold a pausepoint API key.');

  if (credential.kind === 'api_key') {
    const cached = keys.get(credential.hash);
    if (cached) return keyHolder(cached, credential);
    return lookUpApiKey(app, keys, credential.hash).then((key) => keyHolder(key, credential));
  }
  return sessionHolder(app, credential.hash, policy);
}

function keyHolder(key: KnownKey | undefined, credential: { mode: Mode; hash: string }): Principal {
  if (!key || key.mode !== credential.mode) throw unauthorized('The API key is invalid or has been rotated.');
  return { developerId: key.developerId, mode: key.mode, via: 'api_key', credentialHash: credential.hash };
}

async function sessionHolder(app: FastifyInstance, hash: string, policy: AuthPolicy): Promise<Principal> {
  if (policy !== 'key_or_session') {
    throw unauthorized('A login session works only for /v1/auth/me and /v1/auth/keys/rotate; use an API key.');
  }
  const developerId = await sessionOwner(app.services, hash);
  if (!developerId) throw unauthorized('The session has expired; log in again.');
  return { developerId, mode: null, via: 'session', credentialHash: hash };
}

async function lookUpApiKey(app: FastifyInstance, keys: ApiKeyCache, keyHash: string): Promise<KnownKey | undefined> {
  const startedAt = keys.startLookup();
  const key = await apiKeyOwner(app.services, keyHash);
  if (!key) return undefined;
  keys.remember(keyHash, key, startedAt);
  return key;
}

/**
 * Adds authentication to every route of this plugin scope (the /v1 API): the
 * policy is read once as each route is added, and a protected route gets the
 * hook as its own, so a request neither looks its route's config up nor, with
 * a cached key, waits for a promise.
 */
export function installAuthentication(app: FastifyInstance): void {
  const { clock, wakeUpListener } = app.services;
  const keys = new ApiKeyCache(() => clock.now().getTime());
  wakeUpListener.watchKeyRotations(keys);
  app.decorateRequest('principal', null);
  const admit = (request: FastifyRequest, principal: Principal) => {
    request.principal = principal;
    app.rateLimits.api.hit(rateLimitKey(principal));
  };
  const hook =
    (policy: AuthPolicy): onRequestHookHandler =>
    (request, _reply, done) => {
      const admitted = (principal: Principal) => {
        try {
          admit(request, principal);
        } catch (error) {
          return done(error as Error);
        }
        done();
      };
      let found: Principal | Promise<Principal>;
      try {
        found = authenticate(app, keys, request, policy);
      } catch (error) {
        return done(error as Error);
      }
      if (found instanceof Promise) found.then(admitted, done);
      else admitted(found);
    };
  app.addHook('onRoute', (route) => {
    const policy = route.config?.auth ?? 'key';
    if (policy === 'none') return;
    // A new array: Fastify copies a GET's options for its HEAD route before this runs.
    const own =
      route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [hook(policy), ...own];
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
