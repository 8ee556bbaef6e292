/**
 * Which IP addresses a webhook may reach in a deployed stage: the special-purpose ranges (IANA
 * IPv4/IPv6 special-purpose registries, RFC 6890) and how an address, in any of its spellings, is
 * classified. Pure rules, no DNS and no I/O: the PATCH /campaign check and the delivery both
 * apply them through `lib/webhooks/ssrf.ts`, which resolves names and pins the checked address.
 *
 * Host forms: WHATWG URL parsing (`new URL`) already turns every IPv4 spelling into dotted quad
 * (`http://2130706433/`, `http://0x7f.1/`, `http://017700000001/`, `http://127.1/` all give
 * `127.0.0.1`) and prints IPv6 literals compressed in brackets (`[::ffff:7f00:1]`), so classifying
 * `URL.hostname` covers the odd numeric forms; anything else is a name and is resolved.
 */
import { BlockList, isIP } from 'node:net';

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
export function hostLiteral(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}
