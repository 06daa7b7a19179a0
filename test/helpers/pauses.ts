import { expect } from 'vitest';
import { call } from './http.js';
import type { TestService } from './service.js';

/** Creates a pause and returns its body; fails the test on anything but 201. */
export async function createPause(baseUrl: string, key: string, body: Record<string, unknown> = {}) {
  const reply = await call(baseUrl, 'POST', '/v1/pause', { token: key, body: { title: 'Ship it?', ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

/** The token of a response link: a pause's response_url, or a reviewer's own. */
export function tokenOf(holder: { response_url: string | null }): string {
  if (holder.response_url === null) throw new Error('no response_url: the pause has reviewers, use one of theirs');
  return new URL(holder.response_url).pathname.replace(/^\/r\//, '');
}

/** The rows of the events table for one pause, read from the service's database. */
export function eventsOf(service: TestService, pauseId: string) {
  return service.store.db.selectFrom('events').selectAll().where('pause_id', '=', pauseId).execute();
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until check() passes or the time is up (then fails with check's error). */
export async function eventually(check: () => Promise<void> | void, timeoutMs = 5000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(everyMs);
    }
  }
}
