import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { responseToken, reviewerToken, verifyResponseToken } from '../../src/domain/response-token.js';

// Response links: a token is genuine only with its service's key, whatever
// this process has computed or remembered before.

const PAUSE = 'pause_01m8dr9thfm16n59epzekxvag1';
const OTHER_PAUSE = 'pause_01m8dr9thfm16n59epzekxvag2';
const REVIEWER = 'rvw_01m8dr9thfm16n59epzekxvag1';

describe('response tokens', () => {
  it('verifies its own shared and reviewer tokens, and says what each stands for', () => {
    const key = randomBytes(32);
    expect(verifyResponseToken(key, responseToken(key, PAUSE))).toEqual({ pauseId: PAUSE });
    expect(verifyResponseToken(key, reviewerToken(key, PAUSE, REVIEWER))).toEqual({
      pauseId: PAUSE,
      reviewerId: REVIEWER,
    });
  });

  it('gives the same token each time, and a token of one key is refused by another, cached or not', () => {
    const mine = randomBytes(32);
    const theirs = randomBytes(32);
    const token = responseToken(mine, PAUSE);
    expect(responseToken(mine, PAUSE)).toBe(token);
    expect(responseToken(theirs, PAUSE)).not.toBe(token);
    expect(verifyResponseToken(theirs, token)).toBeNull();
    expect(verifyResponseToken(mine, token)).toEqual({ pauseId: PAUSE });
  });

  it('refuses a forged, truncated or moved mac, and a forgery does not make the genuine token fail later', () => {
    const key = randomBytes(32);
    const genuine = responseToken(key, PAUSE);
    const mac = genuine.slice(PAUSE.length + 1);
    const forged = `${PAUSE}.${'A'.repeat(mac.length)}`;
    expect(verifyResponseToken(key, forged)).toBeNull();
    expect(verifyResponseToken(key, genuine.slice(0, -1))).toBeNull();
    expect(verifyResponseToken(key, `${OTHER_PAUSE}.${mac}`)).toBeNull();
    expect(verifyResponseToken(key, `${PAUSE}.${REVIEWER}.${mac}`)).toBeNull();
    expect(verifyResponseToken(key, genuine)).toEqual({ pauseId: PAUSE });
  });

  it('verifies a genuine token it never issued (another instance did), and still after many others', () => {
    const key = randomBytes(32);
    const fromAnotherInstance = responseToken(Buffer.from(key), PAUSE);
    for (let i = 0; i < 5000; i++) responseToken(key, `pause_${String(i).padStart(26, '0')}`);
    expect(verifyResponseToken(key, fromAnotherInstance)).toEqual({ pauseId: PAUSE });
  });
});
