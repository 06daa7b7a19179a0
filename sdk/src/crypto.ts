// Web Crypto only: works on Node 18+, Deno, Bun, browsers and edge runtimes,
// none of which need node:crypto.

let webCrypto: Promise<Crypto> | undefined;

/** The platform's Web Crypto: globalThis.crypto, or node:crypto's webcrypto on a Node 18 without the global. */
export function getWebCrypto(): Promise<Crypto> {
  webCrypto ??= (async () => {
    const global = (globalThis as { crypto?: Crypto }).crypto;
    if (global?.subtle) return global;
    // Only reached on Node 18 without --experimental-global-webcrypto. The
    // specifier is a variable so that bundlers for other runtimes leave it be.
    const specifier = 'node:crypto';
    try {
      const module = (await import(/* @vite-ignore */ /* webpackIgnore: true */ specifier)) as { webcrypto?: Crypto };
      if (module.webcrypto?.subtle) return module.webcrypto;
    } catch {}
    throw new Error('pausepoint: this runtime has no Web Crypto (globalThis.crypto.subtle)');
  })();
  return webCrypto;
}

const encoder = new TextEncoder();

export function toBytes(data: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof data === 'string') return encoder.encode(data);
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  // A Uint8Array from another realm (a Buffer from a vm context, etc.).
  if (ArrayBuffer.isView(data)) {
    const view = data as ArrayBufferView;
    return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  }
  throw new TypeError('expected a string, Uint8Array or ArrayBuffer');
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += HEX[byte];
  return hex;
}

/** HMAC-SHA256 of `data` keyed with `key` (a secret's UTF-8 bytes when a string). */
export async function hmacSha256(key: string | Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const { subtle } = await getWebCrypto();
  const raw = typeof key === 'string' ? encoder.encode(key) : key;
  const imported = await subtle.importKey(
    'raw',
    raw as Uint8Array<ArrayBuffer>,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return new Uint8Array(await subtle.sign('HMAC', imported, data as Uint8Array<ArrayBuffer>));
}

/** Lowercase hex HMAC-SHA256 of `data` keyed with `secret`. */
export async function hmacSha256Hex(secret: string, data: Uint8Array): Promise<string> {
  return toHex(await hmacSha256(secret, data));
}

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The bytes of strict base64 (padded, standard alphabet), or undefined for anything else. */
export function fromBase64(text: string): Uint8Array | undefined {
  if (text.length === 0 || !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) {
    return undefined;
  }
  const binary = atob(text);
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/**
 * Compares two byte strings in time that depends only on their lengths (which
 * are not secret: a signature header's length is public).
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}

/** A random UUID (v4) for idempotency keys. */
export async function randomUuid(): Promise<string> {
  const crypto = await getWebCrypto();
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
