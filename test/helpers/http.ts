// A small JSON client for the tests: real HTTP, nothing mocked.

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Aborting it hangs up, as a client that goes away. */
  signal?: AbortSignal;
}

export async function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: body as BodyInit | undefined,
    signal: options.signal,
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {}
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export interface Account {
  id: string;
  email: string;
  password: string;
  live: string;
  test: string;
}

let accounts = 0;

/** Registers a new developer and returns its keys. */
export async function registerAccount(baseUrl: string): Promise<Account> {
  accounts += 1;
  const email = `dev${accounts}.${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'correct horse battery';
  const reply = await call(baseUrl, 'POST', '/v1/auth/register', { body: { email, password } });
  if (reply.status !== 201) throw new Error(`register failed: ${reply.status} ${reply.text}`);
  return { id: reply.body.developer.id, email, password, live: reply.body.keys.live, test: reply.body.keys.test };
}
