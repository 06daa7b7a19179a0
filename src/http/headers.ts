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
