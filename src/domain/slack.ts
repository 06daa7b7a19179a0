import { createHmac, timingSafeEqual } from 'node:crypto';

// The rules of Slack's side of things that need no I/O: what a channel id
// looks like, and the `v0` signature of an interaction Slack sends in HTTP mode.

/** A public or private channel id, as `notify.slack.channel` takes it. */
export const SLACK_CHANNEL_PATTERN = '^C[A-Z0-9]{6,20}$';
export const MAX_SLACK_CHANNEL_LENGTH = 21;

/** How old an interaction's timestamp may be (either way), as Slack documents: 5 minutes. */
export const SLACK_SIGNATURE_WINDOW_SECONDS = 5 * 60;

/**
 * Whether Slack signed this body (`v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`
 * with the signing secret, compared in constant time) within the window.
 */
export function slackSignatureValid(input: {
  secret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  body: Buffer;
  nowMs: number;
}): boolean {
  const { timestamp, signature } = input;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(input.nowMs / 1000 - Number(timestamp)) > SLACK_SIGNATURE_WINDOW_SECONDS) return false;
  const expected = Buffer.from(
    `v0=${createHmac('sha256', input.secret).update(`v0:${timestamp}:`).update(input.body).digest('hex')}`,
  );
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
