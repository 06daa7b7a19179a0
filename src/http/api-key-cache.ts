import type { Mode } from '../domain/keys.js';

export interface KnownKey {
  developerId: string;
  mode: Mode;
}

interface Entry extends KnownKey {
  cachedAt: number;
}

/**
 * API keys recently seen valid, by SHA-256, so most requests skip the
 * api_keys lookup. Rotation forgets a developer's keys at once: locally
 * straight after the commit, on other PostgreSQL instances when the
 * rotation's NOTIFY arrives. While those notices cannot be heard (the
 * listener is reconnecting) the cache is bypassed. The TTL bounds what any
 * missed notice could cost, e.g. two API processes sharing one SQLite file.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation; a lookup that began before one is not cached. */
  private generation = 0;
  private enabled = true;

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = 10_000,
    private readonly maxEntries = 10_000,
  ) {}

  get(keyHash: string): KnownKey | undefined {
    const entry = this.enabled ? this.entries.get(keyHash) : undefined;
    if (!entry) return undefined;
    if (this.now() - entry.cachedAt < this.ttlMs) return entry;
    this.entries.delete(keyHash);
    return undefined;
  }

  /** Where a lookup starts: pass the result to remember() with the key found. */
  startLookup(): number {
    return this.generation;
  }

  remember(keyHash: string, key: KnownKey, lookupStartedAt: number): void {
    if (!this.enabled || lookupStartedAt !== this.generation) return;
    // Oldest first out: a Map iterates in insertion order.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(keyHash, { developerId: key.developerId, mode: key.mode, cachedAt: this.now() });
  }

  /** Forgets one developer's keys, or with null every key. */
  forget(developerId: string | null): void {
    this.generation++;
    if (developerId === null) {
      this.entries.clear();
      return;
    }
    for (const [hash, entry] of this.entries) if (entry.developerId === developerId) this.entries.delete(hash);
  }

  /** Off while rotations elsewhere cannot be heard; on again (empty) once they can. */
  setEnabled(enabled: boolean): void {
    this.forget(null);
    this.enabled = enabled;
  }
}
