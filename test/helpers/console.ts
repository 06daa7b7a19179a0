import { expect } from 'vitest';

// A browser-less client for the console: real HTTP, form posts, its own
// cookie jar of one cookie, and no redirect followed (tests look at them).

export interface ConsoleReply {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export class ConsoleClient {
  /** "name=value" of the session cookie, once set. */
  cookie: string | undefined;

  constructor(readonly baseUrl: string) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<ConsoleReply> {
    return this.send('GET', path, undefined, headers);
  }

  async post(
    path: string,
    form: Record<string, string> | URLSearchParams,
    headers: Record<string, string> = {},
  ): Promise<ConsoleReply> {
    return this.send('POST', path, new URLSearchParams(form).toString(), headers);
  }

  private async send(
    method: string,
    path: string,
    body: string | undefined,
    extra: Record<string, string>,
  ): Promise<ConsoleReply> {
    const headers: Record<string, string> = { ...extra };
    if (this.cookie) headers.cookie = this.cookie;
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) {
      const pair = setCookie.split(';')[0]!;
      this.cookie = pair.endsWith('=') ? undefined : pair;
    }
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      location: response.headers.get('location'),
    };
  }

  /** Signs in through the form; expects it to work. */
  async signIn(email: string, password: string): Promise<ConsoleReply> {
    const reply = await this.post('/console/sign-in', { email, password });
    expect(reply.status, reply.text).toBe(303);
    expect(reply.location).toBe('/console/pauses');
    return reply;
  }

  /** The CSRF token in a page's forms. */
  async csrf(path = '/console/pauses'): Promise<string> {
    const page = await this.get(path);
    expect(page.status, page.text).toBe(200);
    return csrfIn(page.text);
  }
}

export function csrfIn(html: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF token in the page');
  return match[1]!;
}
