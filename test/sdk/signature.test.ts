import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  parseWebhookEvent,
  signWebhookPayload,
  standardSignature,
  verifyWebhookSignature,
  WebhookVerificationError,
} from '../../sdk/src/index.js';

// The SDK's webhook verification (Web Crypto, constant-time comparison over
// bytes) checked against known vectors and node:crypto, and against every way
// a body or header can be wrong.

const SECRET = 'whsec_0123456789abcdef';
const BODY =
  '{"event":"pause.responded","pause_id":"pause_01m8ad2wevk7xw5mbnn4wab97e","developer_id":"dev_01m8ad2wevk7xw5mbnn4wab97f","timestamp":"2026-11-25T22:28:41.120Z","data":{"choice":"approve","text":"ship it","response_at":"2026-11-25T22:28:41.120Z","metadata":{"pipeline":4711}}}';
const nodeSign = (body: string | Buffer, secret = SECRET) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('signatures', () => {
  it('matches the HMAC-SHA256 test vectors of RFC 4231', async () => {
    // Test case 2: key "Jefe".
    expect(await signWebhookPayload('what do ya want for nothing?', 'Jefe')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
    // Test case 1: key 0x0b × 20, data "Hi There".
    expect(await signWebhookPayload('Hi There', '\x0b'.repeat(20))).toBe(
      'sha256=b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
    );
  });

  it('signs exactly as the service does (node:crypto over the raw bytes)', async () => {
    expect(await signWebhookPayload(BODY, SECRET)).toBe(nodeSign(BODY));
    const unicode = '{"data":{"text":"déployer ✓ 🚀"}}';
    expect(await signWebhookPayload(unicode, SECRET)).toBe(nodeSign(Buffer.from(unicode, 'utf8')));
  });

  it('verifies a genuine signature whatever form the body comes in', async () => {
    const header = nodeSign(BODY);
    const bytes = Buffer.from(BODY);
    expect(await verifyWebhookSignature(BODY, header, SECRET)).toBe(true);
    expect(await verifyWebhookSignature(bytes, header, SECRET)).toBe(true);
    expect(await verifyWebhookSignature(new Uint8Array(bytes), header, SECRET)).toBe(true);
    expect(await verifyWebhookSignature(new TextEncoder().encode(BODY).buffer, header, SECRET)).toBe(true);
    // A Buffer that is a slice of a larger pool.
    const pooled = Buffer.concat([Buffer.from('xx'), bytes, Buffer.from('yy')]).subarray(2, 2 + bytes.length);
    expect(await verifyWebhookSignature(pooled, header, SECRET)).toBe(true);
    // Node hands repeated headers over as an array.
    expect(await verifyWebhookSignature(BODY, ['sha256=00', header], SECRET)).toBe(true);
  });

  it('rejects tampered bodies, wrong secrets and malformed headers', async () => {
    const header = nodeSign(BODY);
    const tampered = BODY.replace('"approve"', '"reject"');
    expect(await verifyWebhookSignature(tampered, header, SECRET)).toBe(false);
    expect(await verifyWebhookSignature(`${BODY} `, header, SECRET)).toBe(false);
    expect(await verifyWebhookSignature(JSON.stringify(JSON.parse(BODY), null, 2), header, SECRET)).toBe(false);
    expect(await verifyWebhookSignature(BODY, header, `${SECRET}!`)).toBe(false);
    for (const bad of [
      undefined,
      null,
      '',
      [],
      header.slice(7), // no sha256= prefix
      header.toUpperCase(),
      `sha1=${header.slice(7)}`,
      header.slice(0, -1),
      `${header}0`,
      `${header.slice(0, -1)}${header.endsWith('0') ? '1' : '0'}`,
    ]) {
      expect(await verifyWebhookSignature(BODY, bad as string, SECRET), String(bad)).toBe(false);
    }
  });

  it('insists on a secret', async () => {
    await expect(verifyWebhookSignature(BODY, nodeSign(BODY), '')).rejects.toThrow(/secret/);
  });
});

describe('Standard Webhooks signatures', () => {
  const WHSEC = `whsec_${Buffer.from('a key of twenty-four byte').toString('base64')}`;
  const at = new Date('2026-11-27T12:00:00Z');
  const headersFor = (signature: string, id = 'dlv_1', timestamp = at) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signature,
  });

  it('signs as the standardwebhooks package does, with a whsec_ key decoded and another secret as UTF-8', async () => {
    expect(await standardSignature(BODY, 'dlv_1', at.getTime() / 1000, WHSEC)).toBe(
      new StandardWebhook(WHSEC).sign('dlv_1', at, BODY),
    );
    // Not base64 after whsec_: the secret's own bytes, as the service keys it.
    expect(await standardSignature(BODY, 'dlv_1', at.getTime() / 1000, SECRET.replace('whsec_', 'whsec_!'))).toBe(
      new StandardWebhook(Buffer.from('whsec_!0123456789abcdef'), { format: 'raw' }).sign('dlv_1', at, BODY),
    );
  });

  it('verifies any of the space-separated entries, within the tolerance, and refuses the rest', async () => {
    const now = at.getTime();
    const genuine = new StandardWebhook(WHSEC).sign('dlv_1', at, BODY);
    const other = new StandardWebhook(`whsec_${Buffer.from('another key').toString('base64')}`).sign('dlv_1', at, BODY);
    expect(await verifyWebhookSignature(BODY, headersFor(`${other} ${genuine}`), WHSEC, { now })).toBe(true);
    expect(await verifyWebhookSignature(BODY, headersFor(other), WHSEC, { now })).toBe(false);
    expect(await verifyWebhookSignature(`${BODY} `, headersFor(genuine), WHSEC, { now })).toBe(false);
    expect(await verifyWebhookSignature(BODY, headersFor(genuine, 'dlv_2'), WHSEC, { now })).toBe(false);
    expect(await verifyWebhookSignature(BODY, headersFor(genuine), WHSEC, { now: now + 301_000 })).toBe(false);
    expect(
      await verifyWebhookSignature(BODY, headersFor(genuine), WHSEC, { now: now + 301_000, toleranceSeconds: 400 }),
    ).toBe(true);
    expect(
      await verifyWebhookSignature(BODY, { ...headersFor(genuine), 'webhook-timestamp': 'x' }, WHSEC, { now }),
    ).toBe(false);
    // Headers without webhook-signature (a replay stripped of them, past the tolerance): refused,
    // unless the caller opts in to X-Service-Signature, which has no timestamp.
    const legacy = { 'X-Service-Signature': nodeSign(BODY, WHSEC) };
    expect(await verifyWebhookSignature(BODY, legacy, WHSEC)).toBe(false);
    await expect(parseWebhookEvent(BODY, legacy, WHSEC)).rejects.toMatchObject({ code: 'invalid_signature' });
    expect(await verifyWebhookSignature(BODY, legacy, WHSEC, { acceptLegacySignature: true })).toBe(true);
    expect(await verifyWebhookSignature(BODY, {}, WHSEC, { acceptLegacySignature: true })).toBe(false);
    // The header string form still checks X-Service-Signature.
    expect(await verifyWebhookSignature(BODY, legacy['X-Service-Signature'], WHSEC)).toBe(true);
  });
});

describe('parseWebhookEvent', () => {
  it('returns the typed event for a genuine body', async () => {
    const event = await parseWebhookEvent(Buffer.from(BODY), nodeSign(BODY), SECRET);
    expect(event).toEqual(JSON.parse(BODY));
    switch (event.event) {
      case 'pause.responded':
        expect(event.data.choice.toUpperCase()).toBe('APPROVE');
        break;
      default:
        throw new Error(`unexpected ${event.event}`);
    }
  });

  it('accepts pause.voted, and pause.responded with who decided and the votes', async () => {
    const envelope = { pause_id: 'pause_1', developer_id: 'dev_1', timestamp: '2026-11-25T22:28:41.120Z' };
    const reviewer = { id: 'rvw_1', email: 'ana@example.com', name: 'Ana' };
    const at = '2026-11-25T22:28:41.120Z';
    const voted = JSON.stringify({
      event: 'pause.voted',
      ...envelope,
      data: { reviewer, choice: 'approve', text: null, voted_at: at, votes_so_far: 1, metadata: {} },
    });
    const event = await parseWebhookEvent(voted, nodeSign(voted), SECRET);
    if (event.event !== 'pause.voted') throw new Error(`unexpected ${event.event}`);
    expect(event.data.reviewer.email).toBe('ana@example.com');
    expect(event.data.votes_so_far).toBe(1);

    const vote = { reviewer_id: 'rvw_1', email: 'ana@example.com', choice: 'approve', text: null, voted_at: at };
    const responded = JSON.stringify({
      event: 'pause.responded',
      ...envelope,
      data: { choice: 'approve', text: null, response_at: at, metadata: {}, responded_by: reviewer, votes: [vote] },
    });
    const parsed = await parseWebhookEvent(responded, nodeSign(responded), SECRET);
    if (parsed.event !== 'pause.responded') throw new Error(`unexpected ${parsed.event}`);
    expect(parsed.data.responded_by).toEqual(reviewer);
    expect(parsed.data.votes).toEqual([vote]);

    for (const data of [
      { reviewer: null, choice: 'approve', text: null, voted_at: at, votes_so_far: 1, metadata: {} },
      { reviewer: { id: 'rvw_1' }, choice: 'approve', text: null, voted_at: at, votes_so_far: 1, metadata: {} },
      { reviewer, choice: null, text: null, voted_at: at, votes_so_far: 1, metadata: {} },
      { reviewer, choice: 'approve', text: null, voted_at: at, votes_so_far: '1', metadata: {} },
    ]) {
      const body = JSON.stringify({ event: 'pause.voted', ...envelope, data });
      const error = await parseWebhookEvent(body, nodeSign(body), SECRET).catch((e) => e);
      expect(error, body).toBeInstanceOf(WebhookVerificationError);
      expect(error.code, body).toBe('invalid_payload');
    }
  });

  it('accepts the other two event types', async () => {
    const envelope = { pause_id: 'pause_1', developer_id: 'dev_1', timestamp: '2026-11-25T22:28:41.120Z' };
    const timedOut = JSON.stringify({
      event: 'pause.timed_out',
      ...envelope,
      data: { choice: null, response_at: '2026-11-25T22:28:41.120Z', metadata: {} },
    });
    const cancelled = JSON.stringify({ event: 'pause.cancelled', ...envelope, data: { metadata: { a: 1 } } });
    expect((await parseWebhookEvent(timedOut, nodeSign(timedOut), SECRET)).event).toBe('pause.timed_out');
    const parsed = await parseWebhookEvent(cancelled, nodeSign(cancelled), SECRET);
    expect(parsed).toMatchObject({ event: 'pause.cancelled', data: { metadata: { a: 1 } } });
  });

  it('throws invalid_signature for a tampered body, before parsing it', async () => {
    const tampered = BODY.replace('"approve"', '"reject"');
    const error = await parseWebhookEvent(tampered, nodeSign(BODY), SECRET).catch((e) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error.code).toBe('invalid_signature');
    const garbage = await parseWebhookEvent('not json', nodeSign(BODY), SECRET).catch((e) => e);
    expect(garbage.code).toBe('invalid_signature');
  });

  it('throws invalid_payload for a signed body that is not a pausepoint event', async () => {
    for (const body of [
      'not json',
      '[]',
      '{"event":"pause.exploded","pause_id":"p","developer_id":"d","timestamp":"t","data":{"metadata":{}}}',
      '{"event":"pause.responded","pause_id":"p","developer_id":"d","timestamp":"t","data":{"choice":null,"text":null,"response_at":"t","metadata":{}}}',
      '{"event":"pause.cancelled","pause_id":"p","developer_id":"d","timestamp":"t"}',
      '{"event":"pause.cancelled","pause_id":1,"developer_id":"d","timestamp":"t","data":{"metadata":{}}}',
    ]) {
      const error = await parseWebhookEvent(body, nodeSign(body), SECRET).catch((e) => e);
      expect(error, body).toBeInstanceOf(WebhookVerificationError);
      expect(error.code, body).toBe('invalid_payload');
    }
    const invalidUtf8 = Buffer.from([0x7b, 0xff, 0x7d]);
    const error = await parseWebhookEvent(invalidUtf8, nodeSign(invalidUtf8), SECRET).catch((e) => e);
    expect(error.code).toBe('invalid_payload');
  });
});
