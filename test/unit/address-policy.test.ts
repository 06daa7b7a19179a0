import ipaddr from 'ipaddr.js';
import { describe, expect, it, vi } from 'vitest';
import type { Cidr } from '../../src/config.js';
import { checkOutboundUrl, checkWebhookUrl, isPublicAddress, resolveHost } from '../../src/net/address-policy.js';

// This machine has no outside DNS: every name is resolved by an injected table.
const dns: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'mixed.example.com': ['93.184.215.14', '10.0.0.5'],
  'mixed6.example.com': ['2606:4700:4700::1111', 'fd00::1'],
  'rebind.example.com': ['127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:10.1.2.3'],
  'empty.example.com': [],
};
const resolve = vi.fn(async (host: string) => {
  const answer = dns[host];
  if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answer;
});

const cidr = (text: string): Cidr => ipaddr.parseCIDR(text);
const check = (url: string, allowedNetworks: Cidr[] = []) => checkWebhookUrl(url, { allowedNetworks, resolve });

describe('checkWebhookUrl refuses every non-public destination', () => {
  const refused: [string, string][] = [
    // IPv4 loopback in every notation the WHATWG parser accepts
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://127.1/hook', 'short IPv4 form'],
    ['https://0x7f000001/hook', 'hex IPv4'],
    ['https://0x7f.0.0.1/hook', 'hex octet'],
    ['https://2130706433/hook', 'decimal IPv4'],
    ['https://0177.0.0.1/hook', 'octal IPv4'],
    ['https://127.0.0.1./hook', 'trailing dot'],
    ['https://127.255.255.254/', 'loopback /8'],
    // private, link-local, CGNAT, special IPv4
    ['https://10.0.0.1/', 'RFC 1918 10/8'],
    ['https://172.16.0.1/', 'RFC 1918 172.16/12'],
    ['https://172.31.255.255/', 'RFC 1918 172.16/12 end'],
    ['https://192.168.1.1/', 'RFC 1918 192.168/16'],
    ['https://169.254.169.254/latest/meta-data/', 'cloud metadata'],
    ['https://0xa9fea9fe/', 'cloud metadata in hex'],
    ['https://100.64.0.1/', 'CGNAT'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://0/', 'unspecified, short'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://255.255.255.255/', 'broadcast'],
    ['https://192.0.2.1/', 'TEST-NET-1'],
    ['https://198.51.100.1/', 'TEST-NET-2'],
    ['https://203.0.113.1/', 'TEST-NET-3'],
    ['https://198.18.0.1/', 'benchmarking'],
    ['https://192.0.0.1/', 'IETF protocol assignments'],
    ['https://240.0.0.1/', 'reserved class E'],
    // IPv6
    ['https://[::1]/', 'IPv6 loopback'],
    ['https://[::]/', 'IPv6 unspecified'],
    ['https://[fc00::1]/', 'unique-local'],
    ['https://[fd12:3456::1]/', 'unique-local fd'],
    ['https://[fe80::1]/', 'link-local'],
    ['https://[fec0::1]/', 'deprecated site-local'],
    ['https://[ff02::1]/', 'multicast'],
    ['https://[2001:db8::1]/', 'documentation'],
    ['https://[::ffff:127.0.0.1]/', 'IPv4-mapped loopback'],
    ['https://[::ffff:7f00:1]/', 'IPv4-mapped loopback, hex'],
    ['https://[::ffff:a9fe:a9fe]/', 'IPv4-mapped metadata'],
    ['https://[::ffff:10.0.0.1]/', 'IPv4-mapped private'],
    ['https://[::127.0.0.1]/', 'IPv4-compatible loopback'],
    ['https://[::10.0.0.1]/', 'IPv4-compatible private'],
    ['https://[::ffff:0:7f00:1]/', 'IPv4-translated (in ::/8)'],
    ['https://[::1:2:3:4]/', 'other ::/8'],
    ['https://[64:ff9b::7f00:1]/', 'NAT64 of loopback'],
    ['https://[64:ff9b::808:808]/', 'NAT64, even of a public address'],
    ['https://[2002:7f00:1::]/', '6to4 of loopback'],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'Teredo'],
    ['https://[100::1]/', 'discard-only'],
    // names
    ['https://localhost/', 'localhost'],
    ['https://LOCALHOST./', 'localhost, upper case with root dot'],
    ['https://foo.localhost/', '*.localhost'],
    ['https://a.b.localhost:8443/', 'deeper *.localhost'],
    ['https://nonexistent.invalid/', 'name that does not resolve'],
    ['https://empty.example.com/', 'name with no addresses'],
    ['https://mixed.example.com/', 'name with a public and a private IPv4'],
    ['https://mixed6.example.com/', 'name with a public and a unique-local IPv6'],
    ['https://rebind.example.com/', 'name resolving to loopback'],
    ['https://metadata.example.com/', 'name resolving to cloud metadata'],
    ['https://mapped.example.com/', 'name resolving to an IPv4-mapped private'],
    // URL shape
    ['http://hooks.example.com/', 'http scheme'],
    ['ftp://hooks.example.com/', 'ftp scheme'],
    ['//hooks.example.com/', 'relative URL'],
    ['hooks.example.com/hook', 'no scheme'],
    ['https://user:s3cr3t@hooks.example.com/', 'user info'],
    ['https://s3cr3t@hooks.example.com/', 'user name only'],
    ['https://hooks.example.com:0/', 'port 0'],
    ['https://hooks.example.com:65536/', 'port out of range'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, 'overlong URL'],
    ['https://exa mple.com/', 'space in host'],
    ['https://-bad.example.com/', 'label starting with a hyphen'],
    [`https://${'a'.repeat(64)}.example.com/`, 'label over 63 characters'],
    ['https://a*b.example.com/', 'invalid character in host'],
    ['https://1.2.3.256/', 'invalid IPv4'],
    ['', 'empty string'],
  ];

  it.each(refused)('%s (%s)', async (url) => {
    const result = await check(url);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toMatch(/^[A-Z].*\.$/);
      expect(result.reason).not.toContain('s3cr3t');
    }
  });

  it('does not look up localhost or IP literals', async () => {
    resolve.mockClear();
    await check('https://localhost/');
    await check('https://foo.localhost/');
    await check('https://127.0.0.1/');
    await check('https://[::1]/');
    await check('https://1.1.1.1/');
    expect(resolve).not.toHaveBeenCalled();
  });

  it('names the refused address, not the URL', async () => {
    const result = await check('https://mixed.example.com/hook?token=s3cr3t');
    expect(result).toEqual({ ok: false, reason: expect.stringContaining('10.0.0.5') });
    expect(JSON.stringify(result)).not.toContain('s3cr3t');
    const literal = await check('https://0x7f000001/?token=s3cr3t');
    expect(literal).toEqual({ ok: false, reason: expect.stringContaining('127.0.0.1') });
    expect(JSON.stringify(literal)).not.toContain('s3cr3t');
  });

  it('refuses a name whose look-up hangs, after the look-up timeout', async () => {
    const result = await checkWebhookUrl('https://slow.example.com/', {
      allowedNetworks: [],
      resolve: () => new Promise(() => {}),
      resolveTimeoutMs: 50,
    });
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/timed out/) });
  });
});

describe('checkWebhookUrl accepts public destinations', () => {
  const accepted: [string, string][] = [
    ['https://1.1.1.1/', 'https://1.1.1.1/'],
    ['https://8.8.8.8:8443/x', 'https://8.8.8.8:8443/x'],
    ['https://[2606:4700:4700::1111]/', 'https://[2606:4700:4700::1111]/'],
    ['https://[::ffff:1.1.1.1]/', 'https://[::ffff:101:101]/'],
    ['https://hooks.example.com/pausepoint?x=1', 'https://hooks.example.com/pausepoint?x=1'],
    ['https://HOOKS.Example.com:443/a', 'https://hooks.example.com/a'],
    ['https://hooks.example.com./', 'https://hooks.example.com./'],
    ['https://16843009/', 'https://1.1.1.1/'],
    [`https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}`, ''],
  ];

  it.each(accepted)('%s', async (raw, normalised) => {
    if (normalised === '' && raw.length !== 2048) throw new Error('fixture should be exactly 2048 characters');
    const result = await checkWebhookUrl(raw, {
      allowedNetworks: [],
      resolve: async (host) => dns[host.replace(/\.$/, '')] ?? [],
    });
    expect(result.ok).toBe(true);
    if (result.ok && normalised !== '') expect(result.url.href).toBe(normalised);
  });

  it('checks the Slack URL by the same rule, under another name, without the webhook testing hint', async () => {
    for (const url of ['https://127.0.0.1/', 'https://[::1]/', 'https://localhost/', 'https://10.0.0.1/']) {
      const outbound = await checkOutboundUrl(url, { allowedNetworks: [], resolve });
      const webhook = await check(url);
      expect(outbound.ok).toBe(false);
      expect((outbound as { reason: string }).reason).not.toContain('pausepoint listen');
      expect((webhook as { reason: string }).reason.startsWith((outbound as { reason: string }).reason)).toBe(true);
    }
    expect(
      (await checkOutboundUrl('https://hooks.example.com/services/T/B/x', { allowedNetworks: [], resolve })).ok,
    ).toBe(true);
    expect(
      (await checkOutboundUrl('http://hooks.example.com/services/T/B/x', { allowedNetworks: [], resolve })).ok,
    ).toBe(false);
  });

  it('admits http:// only when asked to', async () => {
    const result = await checkWebhookUrl('http://1.1.1.1/', { allowedNetworks: [], requireHttps: false });
    expect(result.ok).toBe(true);
    const stillRefused = await checkWebhookUrl('http://127.0.0.1/', { allowedNetworks: [], requireHttps: false });
    expect(stillRefused.ok).toBe(false);
  });
});

describe('WEBHOOK_ALLOWED_NETWORKS exempts its networks', () => {
  const loopback = [cidr('127.0.0.0/8')];

  it.each([
    'https://127.0.0.1:8443/hook',
    'https://127.1/',
    'https://0x7f000001/',
    'https://[::ffff:127.0.0.1]/',
    'https://rebind.example.com/',
  ])('%s passes with 127.0.0.0/8 allowed', async (url) => {
    expect((await check(url, loopback)).ok).toBe(true);
  });

  it.each(['https://10.0.0.1/', 'https://[::1]/', 'https://mixed.example.com/'])(
    '%s is still refused with only 127.0.0.0/8 allowed',
    async (url) => {
      expect((await check(url, loopback)).ok).toBe(false);
    },
  );

  it('localhost is judged by the loopback addresses it stands for: either family allowed admits it', async () => {
    resolve.mockClear();
    expect((await check('https://localhost:8443/', loopback)).ok).toBe(true);
    expect((await check('https://hooks.localhost/', [cidr('::1/128')])).ok).toBe(true);
    expect((await check('https://localhost/', [cidr('10.0.0.0/8')])).ok).toBe(false);
    expect(resolve).not.toHaveBeenCalled();
  });

  it('a refused loopback destination says how to test locally', async () => {
    for (const url of [
      'https://localhost:8443/hook',
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://rebind.example.com/',
    ]) {
      const result = await check(url);
      expect(result.ok).toBe(false);
      const reason = (result as { reason: string }).reason;
      expect(reason).toContain('pausepoint listen');
      expect(reason).toContain('WEBHOOK_ALLOWED_NETWORKS');
    }
    const elsewhere = await check('https://10.0.0.1/');
    expect((elsewhere as { reason: string }).reason).not.toContain('pausepoint listen');
  });

  it('a self-hoster network such as 10.20.0.0/16', async () => {
    const allowed = [cidr('10.20.0.0/16')];
    expect((await check('https://10.20.3.4/', allowed)).ok).toBe(true);
    expect((await check('https://10.21.0.1/', allowed)).ok).toBe(false);
  });

  it('still refuses other rules (scheme, user info, port) inside an allowed network', async () => {
    expect((await check('http://127.0.0.1/', loopback)).ok).toBe(false);
    expect((await check('https://u:p@127.0.0.1/', loopback)).ok).toBe(false);
    expect((await check('https://127.0.0.1:0/', loopback)).ok).toBe(false);
  });
});

describe('isPublicAddress', () => {
  it.each([
    ['1.1.1.1', true],
    ['93.184.215.14', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:1.1.1.1', true],
    ['::ffff:0101:0101', true],
    ['127.0.0.1', false],
    ['10.0.0.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['::1', false],
    ['::', false],
    ['::ffff:127.0.0.1', false],
    ['::127.0.0.1', false],
    ['64:ff9b::101:101', false],
    ['2002:101:101::', false],
    ['fe80::1', false],
    ['fd00::1', false],
    ['ff02::1', false],
    ['2001:db8::1', false],
    // not addresses in a standard notation: never public
    ['127.1', false],
    ['0x7f000001', false],
    ['example.com', false],
    ['', false],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address, [])).toBe(expected);
  });

  it('accepts addresses inside an allowed CIDR, in either notation', () => {
    expect(isPublicAddress('127.0.0.1', [cidr('127.0.0.0/8')])).toBe(true);
    expect(isPublicAddress('::ffff:127.0.0.1', [cidr('127.0.0.0/8')])).toBe(true);
    expect(isPublicAddress('::1', [cidr('127.0.0.0/8')])).toBe(false);
    expect(isPublicAddress('::1', [cidr('::1/128')])).toBe(true);
    expect(isPublicAddress('fd00::5', [cidr('fd00::/8')])).toBe(true);
  });
});

describe('resolveHost', () => {
  it('returns every address of a name from the system resolver', async () => {
    // localhost comes from /etc/hosts, so this needs no network.
    const addresses = await resolveHost('localhost');
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every((address) => address === '127.0.0.1' || address === '::1')).toBe(true);
  });
});
