/** `localhost`, `*.localhost`, with or without the root dot, in any case (RFC 6761: always this machine). */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
