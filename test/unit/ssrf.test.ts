import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type AddressCategory, blockedCategory, embeddedIPv4 } from '../../lib/domain/address-ranges.ts';
import { ApiError } from '../../lib/domain/errors.ts';
import {
  checkDestination,
  checkWebhookDestination,
  DNS_TIMEOUT_MS,
  pinnedLookup,
  type Resolver,
} from '../../lib/webhooks/ssrf.ts';

const ipv4: Array<[string, AddressCategory | undefined]> = [
  ['8.8.8.8', undefined],
  ['1.1.1.1', undefined],
  ['93.184.216.34', undefined],
  ['172.15.255.255', undefined],
  ['172.32.0.0', undefined],
  ['100.63.255.255', undefined],
  ['100.128.0.0', undefined],
  ['198.17.255.255', undefined],
  ['198.20.0.0', undefined],
  ['223.255.255.255', undefined],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'cloud-metadata'],
  ['169.254.170.2', 'cloud-metadata'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['192.0.2.10', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.200', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'reserved'],
];

const ipv6: Array<[string, AddressCategory | undefined]> = [
  ['2606:4700:4700::1111', undefined],
  ['2001:4860:4860::8888', undefined],
  ['2a00:1450:4001:81b::200e', undefined],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['fd00:ec2::254', 'cloud-metadata'],
  ['ff02::1', 'multicast'],
  ['ff0e::101', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001:2::1', 'benchmarking'],
  ['2001::1', 'reserved'], // Teredo
  ['100::1', 'reserved'], // discard-only
  ['fec0::1', 'reserved'], // site-local
  ['1::', 'reserved'], // outside 2000::/3
  ['4000::1', 'reserved'],
  // IPv4-mapped: the IPv4 address is what is reached.
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:169.254.169.254', 'cloud-metadata'],
  ['::ffff:a9fe:a9fe', 'cloud-metadata'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:8.8.8.8', undefined],
  // IPv4-compatible (deprecated): never a real destination.
  ['::127.0.0.1', 'loopback'],
  ['::8.8.8.8', 'reserved'],
  // NAT64 well-known prefix.
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::192.168.0.1', 'private'],
  ['64:ff9b::808:808', undefined],
  ['64:ff9b:1::1', 'reserved'],
  // 6to4 embeds the IPv4 address in bits 16-48.
  ['2002:7f00:1::1', 'loopback'],
  ['2002:a9fe:a9fe::', 'cloud-metadata'],
  ['2002:808:808::1', undefined],
];

describe('blockedCategory', () => {
  it.each(ipv4)('IPv4 %s -> %s', (address, category) => {
    expect(blockedCategory(address)).toBe(category);
  });
  it.each(ipv6)('IPv6 %s -> %s', (address, category) => {
    expect(blockedCategory(address)).toBe(category);
    expect(blockedCategory(`[${address}]`)).toBe(category);
  });
  it('treats anything that is not an address as blocked', () => {
    expect(blockedCategory('example.com')).toBe('reserved');
    expect(blockedCategory('')).toBe('reserved');
  });
  it('finds the IPv4 address inside mapped, NAT64 and 6to4 forms', () => {
    expect(embeddedIPv4('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(embeddedIPv4('64:ff9b::102:304')).toBe('1.2.3.4');
    expect(embeddedIPv4('2002:102:304::')).toBe('1.2.3.4');
    expect(embeddedIPv4('2606:4700::1')).toBeUndefined();
  });
});

/** A resolver that must not be asked (literals) or that answers from a table. */
function resolverOf(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({
      address,
      family: address.includes(':') ? (6 as const) : (4 as const),
    }));
  };
  return Object.assign(resolve, { calls });
}

describe('checkDestination (deployed)', () => {
  const names = resolverOf({
    'hooks.example.com': ['93.184.216.34'],
    'dual.example.com': ['2606:4700::6810:84e5', '104.16.132.229'],
    'sneaky.example.com': ['93.184.216.34', '10.0.0.5'],
    'rebind.example.com': ['127.0.0.1'],
    'metadata.example.com': ['169.254.169.254'],
    'v6local.example.com': ['fd00::1'],
    localhost: ['127.0.0.1', '::1'],
  });
  const deployed = { allowPrivate: false, resolve: names };

  const refused: Array<[string, string]> = [
    ['http://hooks.example.com/x', 'must be an https URL'],
    ['ftp://hooks.example.com/x', 'must be an https URL'],
    ['https://127.0.0.1/', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
    ['https://017700000001/', 'loopback'],
    ['https://127.1/', 'loopback'],
    ['https://0/', 'unspecified'],
    ['https://[::1]/', 'loopback'],
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://[::ffff:7f00:1]:8443/', 'loopback'],
    ['https://[fd00:ec2::254]/', 'cloud-metadata'],
    ['https://169.254.169.254/latest/meta-data/', 'cloud-metadata'],
    ['https://0xa9.0xfe.0xa9.0xfe/', 'cloud-metadata'],
    ['https://10.0.0.1/', 'private'],
    ['https://100.64.1.1/', 'cgnat'],
    ['https://[fe80::1]/', 'link-local'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://192.0.2.1/', 'documentation'],
    ['https://sneaky.example.com/', 'private'],
    ['https://rebind.example.com/', 'loopback'],
    ['https://metadata.example.com/', 'cloud-metadata'],
    ['https://v6local.example.com/', 'unique-local'],
    ['https://localhost:3000/', 'loopback'],
    ['https://nowhere.example.com/', 'does not resolve'],
  ];
  it.each(refused)('refuses %s (%s)', async (url, reason) => {
    const check = await checkDestination(url, deployed);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    if (check.reason !== 'blocked') {
      expect(check.message).toContain(reason);
      return;
    }
    // The range is kept for the log; the message, which the caller sees, says only "not allowed".
    expect(check.category).toBe(reason);
    expect(check.message).toMatch(
      /^(this address is not allowed|host \S+ resolves to an address that is not allowed)$/,
    );
    expect(check.message).not.toContain(reason);
  });

  it('accepts a public https URL and pins the first checked address', async () => {
    const check = await checkDestination('https://dual.example.com/hooks?x=1', deployed);
    expect(check).toMatchObject({
      ok: true,
      hostname: 'dual.example.com',
      address: { address: '2606:4700::6810:84e5', family: 6 },
    });
    const literal = await checkDestination('https://[2606:4700::1111]/', deployed);
    expect(literal).toMatchObject({ ok: true, hostname: '2606:4700::1111', address: { family: 6 } });
  });

  it('resolves a name once and never resolves a literal', async () => {
    names.calls.length = 0;
    await checkDestination('https://hooks.example.com/', deployed);
    await checkDestination('https://8.8.8.8/', deployed);
    expect(names.calls).toEqual(['hooks.example.com']);
  });
});

describe('checkDestination (local stack)', () => {
  it('allows http and private addresses', async () => {
    const local = { allowPrivate: true, resolve: resolverOf({ localhost: ['127.0.0.1'] }) };
    expect((await checkDestination('http://127.0.0.1:8080/x', local)).ok).toBe(true);
    expect((await checkDestination('http://localhost:8080/x', local)).ok).toBe(true);
    expect((await checkDestination('http://[::1]:8080/x', local)).ok).toBe(true);
  });
});

describe('pinnedLookup', () => {
  it('answers both lookup call shapes with the pinned address', () => {
    const lookup = pinnedLookup({ address: '93.184.216.34', family: 4 });
    const one: unknown[] = [];
    lookup('evil.example.com', {}, (...args) => one.push(...args));
    expect(one).toEqual([null, '93.184.216.34', 4]);
    const all: unknown[] = [];
    lookup('evil.example.com', { all: true }, (...args) => all.push(...args));
    expect(all).toEqual([null, [{ address: '93.184.216.34', family: 4 }]]);
  });
});

describe('checkWebhookDestination (PATCH /campaign)', () => {
  const resolve = resolverOf({
    'hooks.example.com': ['93.184.216.34'],
    'internal.example.com': ['10.1.1.1'],
  });
  const deployed = { allowPrivate: false, resolve };

  it('passes a public https URL, null and an absent URL', async () => {
    await expect(checkWebhookDestination('https://hooks.example.com/x', deployed)).resolves.toBeUndefined();
    await expect(checkWebhookDestination(null, deployed)).resolves.toBeUndefined();
    await expect(checkWebhookDestination(undefined, deployed)).resolves.toBeUndefined();
  });

  it.each([
    'https://internal.example.com/x',
    'https://169.254.169.254/',
    'https://[::ffff:10.0.0.1]/',
    'https://2130706433/',
    'https://unknown.example.com/',
  ])('refuses %s with validation_failed on webhook_url', async (url) => {
    const err = await checkWebhookDestination(url, deployed).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('validation_failed');
    expect((err as ApiError).details?.[0]?.field).toBe('webhook_url');
  });

  it('is skipped on the local stack', async () => {
    await expect(
      checkWebhookDestination('http://127.0.0.1:9/', { allowPrivate: true, resolve }),
    ).resolves.toBeUndefined();
  });
});

describe('a slow resolver', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const never: Resolver = () => new Promise(() => undefined);
  const after =
    (ms: number): Resolver =>
    () =>
      new Promise((resolve) => setTimeout(() => resolve([{ address: '93.184.216.34', family: 4 }]), ms));
  const deployed = (resolve: Resolver) => ({ allowPrivate: false, resolve });

  it('is given 3 seconds, then the URL is refused as unresolvable', async () => {
    vi.useFakeTimers();
    expect(DNS_TIMEOUT_MS).toBe(3000);
    let settled = false;
    const check = checkDestination('https://slow.example.com/hook', deployed(never)).finally(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(2999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await check).toEqual({
      ok: false,
      reason: 'unresolvable',
      message: 'host slow.example.com did not resolve within 3 seconds',
    });
    // Nothing left behind that would fire later.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('an answer within the bound is used, and its timer is cleared at once', async () => {
    vi.useFakeTimers();
    const check = checkDestination('https://slow.example.com/hook', deployed(after(2900)));
    await vi.advanceTimersByTimeAsync(2900);
    expect(await check).toMatchObject({ ok: true, address: { address: '93.184.216.34' } });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('PATCH /campaign: 400 validation_failed naming webhook_url and the bound', async () => {
    vi.useFakeTimers();
    const patch = checkWebhookDestination('https://slow.example.com/hook', deployed(never)).catch(
      (e: unknown) => e,
    );
    await vi.advanceTimersByTimeAsync(DNS_TIMEOUT_MS);
    const err = await patch;
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).toBody()).toEqual({
      error: {
        code: 'validation_failed',
        message: 'The request is not valid.',
        details: [
          { field: 'webhook_url', message: 'host slow.example.com did not resolve within 3 seconds' },
        ],
      },
    });
  });

  it('a process that looked a name up exits at once: the bound’s timer does not hold it', () => {
    // In a child process with real timers: the time from the end of the lookup to the process's
    // exit. A timer left running would hold the process for the rest of the 3 s.
    const script = `
      import { checkDestination } from './lib/webhooks/ssrf.ts';
      const resolve = async () => [{ address: '93.184.216.34', family: 4 }];
      const check = await checkDestination('https://hooks.example.com/', { allowPrivate: false, resolve });
      const done = performance.now();
      process.on('exit', () => console.log(JSON.stringify({ ok: check.ok, ms: performance.now() - done })));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
    });
    const { ok, ms } = JSON.parse(out.trim().split('\n').at(-1) as string) as { ok: boolean; ms: number };
    expect(ok).toBe(true);
    expect(ms).toBeLessThan(1000);
  });
});
