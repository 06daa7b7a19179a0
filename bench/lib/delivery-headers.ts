// The headers the worker sends with a delivery (src/actions/deliveries.ts
// deliveryHeaders, SPEC's and Standard Webhooks', and the service's
// user-agent), for a webhook whose secret is known and not rotated: what the
// plain loop and the floor send, so that they cost what a delivery does.
import { deliveryHeaders } from '../../src/actions/deliveries.js';
import { standardSigningKey } from '../../src/domain/webhooks.js';
import { USER_AGENT } from '../../src/service.js';

export function deliveryHeadersFor(
  secret: string,
): (delivery: { id: string; type: string; payload: string }, at: Date) => Record<string, string> {
  const signing = { secret, key: standardSigningKey(secret) };
  return (delivery, at) => ({
    ...deliveryHeaders(
      { ...delivery, secret_sealed: '', previous_secret_sealed: null, previous_secret_expires_at: null },
      at,
      () => signing,
    ),
    'user-agent': USER_AGENT,
  });
}
