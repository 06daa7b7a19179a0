import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, standardSignature, standardSigningKey } from '../../src/domain/webhooks.js';

// The Standard Webhooks key and signature the service sends, against the
// standardwebhooks package's own signer.

const BODY = '{"event":"pause.cancelled","data":{"metadata":{"ü":1}}}';
const at = new Date('2026-11-27T12:00:00Z');
const seconds = at.getTime() / 1000;

describe('standardSigningKey', () => {
  it('decodes a whsec_ base64 secret, as the standard libraries do', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(standardSigningKey(secret)).toHaveLength(24);
    expect(standardSignature(standardSigningKey(secret), 'dlv_1', seconds, BODY)).toBe(
      new Webhook(secret).sign('dlv_1', at, BODY),
    );
  });

  it('takes the UTF-8 bytes of any other secret, a whsec_ one that is not base64 included', () => {
    for (const secret of [
      'a-plain-secret-0123456789',
      'whsec_not_base64_!!',
      'whsec_abc',
      'whsec_',
      'clé-secrète-0123456',
    ]) {
      expect(standardSigningKey(secret)).toEqual(Buffer.from(secret, 'utf8'));
      expect(standardSignature(standardSigningKey(secret), 'dlv_1', seconds, BODY)).toBe(
        new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).sign('dlv_1', at, BODY),
      );
    }
  });

  it('signs "{id}.{timestamp}.{body}" with HMAC-SHA256, base64, after v1,', () => {
    const key = Buffer.from('k'.repeat(32));
    const expected = createHmac('sha256', key).update(`dlv_9.${seconds}.${BODY}`).digest('base64');
    expect(standardSignature(key, 'dlv_9', seconds, BODY)).toBe(`v1,${expected}`);
  });
});
