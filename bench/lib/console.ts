import { request } from 'undici';
import type { Account } from './service.js';

/** Signs in through the console's form; returns the session cookie. */
export async function signIn(baseUrl: string, owner: Account): Promise<string> {
  const reply = await request(`${baseUrl}/console/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: owner.email, password: owner.password }).toString(),
  });
  await reply.body.dump();
  const cookie = String(reply.headers['set-cookie'] ?? '').split(';')[0];
  if (reply.statusCode !== 303 || !cookie) throw new Error(`console sign-in answered ${reply.statusCode}`);
  return cookie;
}
