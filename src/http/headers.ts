import type { ServiceContext } from '../context.js';

type BaseUrl = Pick<ServiceContext, 'publicBaseUrl'>;

/** Whether the service is reached over https (PUBLIC_BASE_URL says so). */
export const isHttps = (services: BaseUrl) => services.publicBaseUrl.startsWith('https:');

/**
 * The headers of every answer: the app's onSend hook sets them, and /mcp,
 * which writes its answer itself, sets the same. API answers carry keys and
 * private data, so no cache may keep them unless the route says otherwise.
 * On https, browsers are told to keep to https (for a year; not its subdomains, which this service does not own); on
 * plain http that header would lock browsers out, so it is left off.
 */
export function commonHeaders(services: BaseUrl, requestId: string): Record<string, string> {
  const headers: Record<string, string> = {
    'x-request-id': requestId,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
  if (isHttps(services)) headers['strict-transport-security'] = 'max-age=31536000';
  return headers;
}

/**
 * What an HTML page needs beyond the policy every page has (its own scripts,
 * styles and images only, forms posted to this service, no framing, no
 * <base>); each page says so here, and its CSP is built from that alone.
 */
export interface PagePolicy {
  /** How much of the page's address a link on it passes on: none where the address holds a token. */
  referrer: 'no-referrer' | 'same-origin';
  /** The page's script fetches from this service (connect-src). */
  fetches?: boolean;
  /** Styles a script injects carry this nonce, fresh for each answer. */
  styleNonce?: string;
  /** data: images and fonts, and blob: workers (the API reference's renderer). */
  dataAndWorkers?: boolean;
  /** The page has no form (form-action 'none'). */
  noForms?: boolean;
}

/** The security headers of an HTML page: its Content-Security-Policy, no framing, its referrer policy. */
export function pageSecurityHeaders(page: PagePolicy): Record<string, string> {
  const directives = [
    "default-src 'none'",
    page.styleNonce ? `style-src 'self' 'nonce-${page.styleNonce}'` : "style-src 'self'",
    "script-src 'self'",
    page.dataAndWorkers ? "img-src 'self' data:; font-src 'self' data:" : "img-src 'self'",
    ...(page.fetches ? ["connect-src 'self'"] : []),
    ...(page.dataAndWorkers ? ['worker-src blob:'] : []),
    page.noForms ? "form-action 'none'" : "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ];
  return {
    'content-security-policy': directives.join('; '),
    'x-frame-options': 'DENY',
    'referrer-policy': page.referrer,
  };
}
