/** The longest outbound URL accepted (a webhook's, a Slack webhook's), in characters. */
export const MAX_URL_LENGTH = 2048;

/** `localhost`, `*.localhost`, with or without the root dot, in any case (RFC 6761: always this machine). */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
