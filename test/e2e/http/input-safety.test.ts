import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Input no handler should see: lone UTF-16 surrogates are refused like NUL
// (they would be stored as U+FFFD, no longer the text that was sent), and a
// body sent to an endpoint that takes none is refused rather than ignored.

let service: TestService;
let dev: Account;
beforeAll(async () => {
  service = await startTestService({ env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' } });
  dev = await registerAccount(service.url);
});
afterAll(() => service?.destroy());

function expectInvalid(reply: { status: number; body: any; text: string }, mentions?: string) {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.error.code).toBe('invalid_request');
  if (mentions) expect(reply.body.error.message).toContain(mentions);
}

describe('lone UTF-16 surrogates', () => {
  // JSON.stringify writes a lone surrogate as the escape \ud800, which JSON.parse reads back as one.
  const lone = ['yes\ud800', 'no\udfff', '\udc00', 'a\ud83d'];

  it('are refused in any string of a new pause, and in object keys', async () => {
    for (const text of lone) {
      for (const body of [
        { title: 'Ship?', options: [text, 'no way'] },
        { title: 'Ship?', options: ['approve', 'reject'], timeout_default: text },
        { title: text },
        { title: 'Ship?', metadata: { note: text } },
        { title: 'Ship?', metadata: { [text]: 1 } },
      ]) {
        const reply = await call(service.url, 'POST', '/v1/pause', { token: dev.test, body });
        expectInvalid(reply, 'surrogate');
      }
    }
    const listed = await call(service.url, 'GET', '/v1/pause', { token: dev.test });
    expect(listed.body.data).toEqual([]);
  });

  it('are refused in an answer, which leaves the pause pending', async () => {
    const pause = await createPause(service.url, dev.test, { allow_text: true });
    const token = tokenOf(pause);
    for (const answer of [{ choice: 'approve', text: 'fine by me \udc00' }, { choice: 'approve\ud800' }]) {
      const reply = await call(service.url, 'POST', `/v1/respond/${token}`, { body: answer });
      expectInvalid(reply, 'surrogate');
    }
    const read = await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: dev.test });
    expect(read.body.status).toBe('pending');
  });

  it('leave well-formed pairs (emoji) alone: the recorded choice is the option sent', async () => {
    const pause = await createPause(service.url, dev.test, {
      options: ['👍 ship', '👎 wait'],
      timeout_default: '👎 wait',
      allow_text: true,
    });
    const answered = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, {
      body: { choice: '👍 ship', text: 'go 🚀' },
    });
    expect(answered.status, answered.text).toBe(200);
    const read = await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: dev.test });
    expect(read.body.response).toMatchObject({ choice: '👍 ship', text: 'go 🚀' });
    expect(read.body.options).toEqual(['👍 ship', '👎 wait']);
  });
});

describe('a body on an endpoint that takes none', () => {
  const json = { 'content-type': 'application/json' };

  it('POST /v1/auth/keys/rotate refuses {"mode":"test"} and rotates nothing', async () => {
    const account = await registerAccount(service.url);
    for (const rawBody of ['{"mode":"test"}', '{}', 'null', '[]']) {
      const reply = await call(service.url, 'POST', '/v1/auth/keys/rotate', {
        token: account.live,
        rawBody,
        headers: json,
      });
      expectInvalid(reply, 'takes no request body');
    }
    const notJson = await call(service.url, 'POST', '/v1/auth/keys/rotate', {
      token: account.live,
      rawBody: 'mode=test',
      headers: { 'content-type': 'text/plain' },
    });
    expect(notJson.status).toBe(415);
    // Both keys still work: nothing was rotated.
    for (const key of [account.live, account.test]) {
      expect((await call(service.url, 'GET', '/v1/auth/me', { token: key })).status).toBe(200);
    }
    // Without a body (or with an empty one) it rotates as before.
    const rotated = await call(service.url, 'POST', '/v1/auth/keys/rotate', {
      token: account.live,
      rawBody: '',
      headers: json,
    });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.mode).toBe('live');
  });

  it('DELETE /v1/pause/{id} refuses a body and leaves the pause pending', async () => {
    const pause = await createPause(service.url, dev.test);
    const reply = await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, {
      token: dev.test,
      body: { reason: 'changed my mind' },
    });
    expectInvalid(reply, 'takes no request body');
    expect((await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: dev.test })).body.status).toBe('pending');
    const cancelled = await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.test });
    expect(cancelled.status).toBe(200);
  });

  it('DELETE /v1/webhooks/{id} and POST …/deliveries/{id}/retry refuse a body', async () => {
    const created = await call(service.url, 'POST', '/v1/webhooks', {
      token: dev.test,
      body: { url: 'https://127.0.0.1:9/hook', events: ['pause.responded'], secret: 'a-secret-of-16-chars' },
    });
    expect(created.status, created.text).toBe(201);
    const webhook = created.body;
    const retry = await call(service.url, 'POST', `/v1/webhooks/${webhook.id}/deliveries/dlv_nope/retry`, {
      token: dev.test,
      body: { force: true },
    });
    expectInvalid(retry, 'takes no request body');
    const remove = await call(service.url, 'DELETE', `/v1/webhooks/${webhook.id}`, {
      token: dev.test,
      body: { id: webhook.id },
    });
    expectInvalid(remove, 'takes no request body');
    const listed = await call(service.url, 'GET', '/v1/webhooks', { token: dev.test });
    expect(listed.body.data.map((w: { id: string }) => w.id)).toContain(webhook.id);
    expect((await call(service.url, 'DELETE', `/v1/webhooks/${webhook.id}`, { token: dev.test })).status).toBe(200);
  });
});
