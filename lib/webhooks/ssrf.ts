/**
 * SSRF guard for webhook destinations.
 *
 * A webhook URL is customer input that this service will POST to from inside AWS, so in a deployed
 * stage it may only reach public unicast addresses. Three places use this module:
 * - PATCH /campaign refuses a URL whose host is (or resolves to) a blocked address;
 * - delivery resolves the name once, checks every address and then connects to exactly the checked
 *   address (see `pinnedLookup`), so a DNS answer that changes between check and connect (DNS
 *   rebinding) cannot redirect the request;
 * - the unit tests, table-driven over IPv4 and IPv6.
 *
 * Host forms: WHATWG URL parsing (`new URL`) already turns every IPv4 spelling into dotted quad
 * (`http://2130706433/`, `http://0x7f.1/`, `http://017700000001/`, `http://127.1/` all give
 * `127.0.0.1`) and prints IPv6 literals compressed in brackets (`[::ffff:7f00:1]`), so classifying
 * `URL.hostname` covers the odd numeric forms; anything else is a name and is resolved.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, isIPv4 } from 'node:net';

export type AddressCategory =
  | 'cloud-metadata'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'documentation'
  | 'benchmarking'
  | 'broadcast'
  | 'reserved'
  | 'unique-local';

interface Range {
  category: AddressCategory;
  v4?: string[];
  v6?: string[];
}

/**
 * Special-purpose ranges (IANA IPv4/IPv6 special-purpose registries, RFC 6890). Order matters:
 * the first match names the category (metadata before link-local, broadcast before reserved).
 */
const ranges: Range[] = [
  {
    category: 'cloud-metadata',
    // EC2/GCP/Azure IMDS, ECS task metadata, EC2 IMDS over IPv6.
    v4: ['169.254.169.254/32', '169.254.170.2/32'],
    v6: ['fd00:ec2::254/128'],
  },
  { category: 'broadcast', v4: ['255.255.255.255/32'] },
  { category: 'unspecified', v4: ['0.0.0.0/8'], v6: ['::/128'] },
  { category: 'loopback', v4: ['127.0.0.0/8'], v6: ['::1/128'] },
  { category: 'private', v4: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'] },
  { category: 'cgnat', v4: ['100.64.0.0/10'] },
  { category: 'link-local', v4: ['169.254.0.0/16'], v6: ['fe80::/10'] },
  { category: 'multicast', v4: ['224.0.0.0/4'], v6: ['ff00::/8'] },
  {
    category: 'documentation',
    v4: ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'],
    v6: ['2001:db8::/32', '3fff::/20'],
  },
  { category: 'benchmarking', v4: ['198.18.0.0/15'], v6: ['2001:2::/48'] },
  { category: 'unique-local', v6: ['fc00::/7'] },
  {
    category: 'reserved',
    v4: [
      '240.0.0.0/4', // future use
      '192.0.0.0/24', // IETF protocol assignments
      '192.88.99.0/24', // 6to4 relay anycast (deprecated)
    ],
    v6: [
      '100::/64', // discard-only
      '2001::/32', // Teredo: the embedded addresses are obfuscated; no webhook needs it
      '2001:10::/28', // ORCHID
      '2001:20::/28', // ORCHIDv2
      '64:ff9b:1::/48', // local-use NAT64
      'fec0::/10', // site-local (deprecated)
    ],
  },
];

const lists = ranges.map((range) => {
  const list = new BlockList();
  for (const cidr of range.v4 ?? []) addSubnet(list, cidr, 'ipv4');
  for (const cidr of range.v6 ?? []) addSubnet(list, cidr, 'ipv6');
  return { category: range.category, list, v4: Boolean(range.v4), v6: Boolean(range.v6) };
});

function addSubnet(list: BlockList, cidr: string, type: 'ipv4' | 'ipv6') {
  const [net, bits] = cidr.split('/') as [string, string];
  list.addSubnet(net, Number(bits), type);
}

/** Parse an IPv6 literal (compressed, with an optional dotted-quad tail) into 16 bytes. */
function ipv6Bytes(address: string): Uint8Array | undefined {
  let text = address.toLowerCase();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  if (isIP(text) !== 6) return undefined;
  let groups: number[] = [];
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    tail.push((parts[0]! << 8) | parts[1]!, (parts[2]! << 8) | parts[3]!);
    text = text.slice(0, -dotted[1]!.length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const hex = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const gap = text.indexOf('::');
  if (gap === -1) groups = [...hex(text), ...tail];
  else {
    const head = hex(text.slice(0, gap));
    const rest = [...hex(text.slice(gap + 2)), ...tail];
    groups = [...head, ...new Array(8 - head.length - rest.length).fill(0), ...rest];
  }
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

const v4 = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const zero = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/**
 * The IPv4 address an IPv6 address carries and that a host or gateway would actually reach:
 * IPv4-mapped `::ffff:a.b.c.d`, the deprecated IPv4-compatible `::a.b.c.d`, the NAT64 well-known
 * prefix `64:ff9b::/96` and 6to4 `2002:AABB:CCDD::/48`.
 */
export function embeddedIPv4(address: string): string | undefined {
  const b = ipv6Bytes(address);
  if (!b) return undefined;
  if (zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(b, 12);
  // IPv4-compatible (::a.b.c.d); `::` and `::1` are classified as themselves.
  if (zero(b, 0, 12) && !zero(b, 12, 15)) return v4(b, 12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(b, 4, 12)) return v4(b, 12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(b, 2);
  return undefined;
}

function isMappedOrNat64(b: Uint8Array): boolean {
  const mapped = zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff;
  const nat64 = b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(b, 4, 12);
  return mapped || nat64;
}

/** Why an address must not be contacted, or `undefined` when it is a public unicast address. */
export function blockedCategory(address: string): AddressCategory | undefined {
  let ip = address.trim();
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  const zone = ip.indexOf('%');
  if (zone !== -1) ip = ip.slice(0, zone);
  const family = isIP(ip);
  if (family === 0) return 'reserved'; // not an address at all: never contact it
  if (family === 4) {
    for (const { category, list, v4 } of lists) if (v4 && list.check(ip, 'ipv4')) return category;
    return undefined;
  }
  const inner = embeddedIPv4(ip);
  if (inner) {
    const category = blockedCategory(inner);
    if (category) return category;
  }
  for (const { category, list, v6 } of lists) if (v6 && list.check(ip, 'ipv6')) return category;
  // Outside global unicast (2000::/3) only the IPv4-mapped and NAT64 forms of a public IPv4
  // address reach a real destination; everything else there is reserved.
  const b = ipv6Bytes(ip)!;
  if ((b[0]! & 0xe0) !== 0x20 && !(inner && isMappedOrNat64(b))) return 'reserved';
  return undefined;
}

/** The URL's host as an address literal (brackets removed), or `undefined` when it is a name. */
function hostLiteral(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}

interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** All addresses of a name, as the system resolver (getaddrinfo) gives them: what a connect uses. */
const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses: LookupAddress[]) => {
      if (err) reject(err);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

export type DestinationCheck =
  | { ok: true; url: URL; hostname: string; address: ResolvedAddress }
  | { ok: false; reason: 'invalid_url' | 'scheme' | 'unresolvable' | 'blocked'; message: string };

interface DestinationPolicy {
  /** Local stack only: `http` and private addresses are allowed. */
  allowPrivate: boolean;
  resolve?: Resolver;
}

/**
 * The bound on one lookup. getaddrinfo follows resolv.conf (5 s per server and attempt by
 * default), so a slow or silent resolver could otherwise hold PATCH /campaign past its function's
 * 10 s timeout, or a delivery attempt past its own. A working resolver answers in milliseconds, a
 * cold recursive lookup well within a second; a name that takes over 3 s is refused at PATCH time
 * and is a failed, retried attempt at delivery.
 */
export const DNS_TIMEOUT_MS = 3_000;

class LookupTimeout extends Error {}

/**
 * The lookup, or a `LookupTimeout` after `ms`. The lookup itself cannot be cancelled (it goes on in
 * libuv's thread pool until the system resolver gives up); only the wait for it ends. The timer is
 * cleared as soon as either settles, and unref'd so that it alone never keeps a process alive.
 */
async function resolveWithin(resolve: Resolver, hostname: string, ms: number): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LookupTimeout()), ms);
    timer.unref();
  });
  try {
    return await Promise.race([resolve(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolve a webhook URL's host ONCE, within `DNS_TIMEOUT_MS`, and check every address it has. On
 * success, `address` is the address to connect to (the first one the resolver returned);
 * connecting anywhere else would undo the check. Literals are checked without DNS.
 */
export async function checkDestination(raw: string, policy: DestinationPolicy): Promise<DestinationCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'invalid_url', message: 'must be an absolute http(s) URL' };
  }
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) {
    return { ok: false, reason: 'scheme', message: 'must be an https URL' };
  }
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = hostLiteral(url);
  let addresses: ResolvedAddress[];
  if (literal) addresses = [{ address: literal, family: isIPv4(literal) ? 4 : 6 }];
  else {
    try {
      addresses = await resolveWithin(policy.resolve ?? systemResolver, hostname, DNS_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof LookupTimeout) {
        return {
          ok: false,
          reason: 'unresolvable',
          message: `host ${hostname} did not resolve within ${DNS_TIMEOUT_MS / 1000} seconds`,
        };
      }
      const code = (err as NodeJS.ErrnoException).code;
      return {
        ok: false,
        reason: 'unresolvable',
        message:
          code === 'ENOTFOUND' || code === 'ENODATA'
            ? `host ${hostname} does not resolve`
            : `host ${hostname} could not be resolved (${code ?? 'error'})`,
      };
    }
    if (addresses.length === 0) {
      return { ok: false, reason: 'unresolvable', message: `host ${hostname} does not resolve` };
    }
  }
  if (!policy.allowPrivate) {
    for (const { address } of addresses) {
      const category = blockedCategory(address);
      if (category) {
        return {
          ok: false,
          reason: 'blocked',
          message: literal
            ? `must not point to a ${category} address`
            : `host ${hostname} resolves to a ${category} address, which is not allowed`,
        };
      }
    }
  }
  return { ok: true, url, hostname, address: addresses[0]! };
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `http.request` / `net.connect` that answers every query with the one address that
 * was checked. Node may ask with `all: true` (happy eyeballs), so both call shapes are answered.
 */
export function pinnedLookup(pinned: ResolvedAddress) {
  return (_hostname: string, options: { all?: boolean } | number | undefined, callback: LookupCallback) => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    if (all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
}
