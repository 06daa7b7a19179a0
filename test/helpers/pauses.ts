import { expect } from 'vitest';
import { call } from './http.js';
import type { TestService } from './service.js';

/** Creates a pause and returns its body; fails the test on anything but 201. */
export async function createPause(baseUrl: string, key: string, body: Record<string, unknown> = {}) {
  const reply = await call(baseUrl, 'POST', '/v1/pause', { token: key, body: { title: 'Ship it?', ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

/** The path of a pause's response page and its token, from response_url. */
export function tokenOf(pause: { response_url: string }): string {
  return new URL(pause.response_url).pathname.replace(/^\/r\//, '');
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
