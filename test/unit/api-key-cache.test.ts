import { describe, expect, it } from 'vitest';
import { ApiKeyCache } from '../../src/http/api-key-cache.js';

// The cache in front of the api_keys lookup: what it keeps, and every way it
// must let go (rotation, a lookup racing a rotation, TTL, an unheard notice).

const alice = { developerId: 'dev_alice', mode: 'live' as const };
const bob = { developerId: 'dev_bob', mode: 'test' as const };

function cacheAt(start = 1_000) {
  let now = start;
  const cache = new ApiKeyCache(() => now, 10_000, 3);
  return { cache, advance: (ms: number) => (now += ms) };
}

describe('ApiKeyCache', () => {
  it('answers for a key it was told about, and for no other', () => {
    const { cache } = cacheAt();
    cache.remember('hash-a', alice, cache.startLookup());
    expect(cache.get('hash-a')).toMatchObject(alice);
    expect(cache.get('hash-b')).toBeUndefined();
  });

  it("forgets one developer's keys on rotation and keeps the others'", () => {
    const { cache } = cacheAt();
    cache.remember('hash-a', alice, cache.startLookup());
    cache.remember('hash-b', bob, cache.startLookup());
    cache.forget('dev_alice');
    expect(cache.get('hash-a')).toBeUndefined();
    expect(cache.get('hash-b')).toMatchObject(bob);
  });

  it('does not keep what a lookup read before a rotation committed', () => {
    const { cache } = cacheAt();
    const startedAt = cache.startLookup();
    cache.forget('dev_alice'); // the rotation lands while the lookup is in flight
    cache.remember('hash-a', alice, startedAt);
    expect(cache.get('hash-a')).toBeUndefined();
  });

  it('lets an entry go after the TTL', () => {
    const { cache, advance } = cacheAt();
    cache.remember('hash-a', alice, cache.startLookup());
    advance(9_999);
    expect(cache.get('hash-a')).toBeDefined();
    advance(1);
    expect(cache.get('hash-a')).toBeUndefined();
  });

  it('keeps nothing while rotations elsewhere cannot be heard, and starts empty again', () => {
    const { cache } = cacheAt();
    cache.remember('hash-a', alice, cache.startLookup());
    cache.setEnabled(false);
    expect(cache.get('hash-a')).toBeUndefined();
    cache.remember('hash-b', bob, cache.startLookup());
    cache.setEnabled(true);
    expect(cache.get('hash-a')).toBeUndefined();
    expect(cache.get('hash-b')).toBeUndefined();
  });

  it('holds at most its size, dropping the oldest', () => {
    const { cache } = cacheAt();
    for (const hash of ['h1', 'h2', 'h3', 'h4']) cache.remember(hash, alice, cache.startLookup());
    expect(cache.get('h1')).toBeUndefined();
    expect(['h2', 'h3', 'h4'].map((hash) => cache.get(hash) !== undefined)).toEqual([true, true, true]);
  });
});
