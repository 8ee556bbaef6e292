/**
 * SSRF guard for webhook destinations.
 *
 * A webhook URL is customer input that this service will POST to from inside AWS, so in a deployed
 * stage it may only reach public unicast addresses (the ranges are `lib/domain/address-ranges.ts`).
 * Three places use this module:
 * - PATCH /campaign refuses a URL whose host is (or resolves to) a blocked address
 *   (`checkWebhookDestination`);
 * - delivery resolves the name once, checks every address and then connects to exactly the checked
 *   address (see `pinnedLookup`), so a DNS answer that changes between check and connect (DNS
 *   rebinding) cannot redirect the request;
 * - the unit tests, table-driven over IPv4 and IPv6.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIPv4 } from 'node:net';
import { type AddressCategory, blockedCategory, hostLiteral } from '../domain/address-ranges.ts';
import type { WebhookUrlPolicy } from '../domain/campaign-rules.ts';
import { validationError } from '../domain/errors.ts';
import { logger as rootLogger } from '../observability/logger.ts';

const logger = rootLogger.createChild();

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
  | {
      ok: false;
      reason: 'invalid_url' | 'scheme' | 'unresolvable' | 'blocked';
      /** Shown to the client (a validation error, the delivery log, the test's answer). */
      message: string;
      /** Of a blocked address: which range it is in. For the server's log only, never the message. */
      category?: AddressCategory;
    };

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
        // The message says only "not allowed": naming the range (loopback, private, metadata...)
        // would let a caller map which internal names resolve where. Operators get it in the log.
        logger.info('webhook destination refused', { host: hostname, address, category });
        return {
          ok: false,
          reason: 'blocked',
          category,
          message: literal
            ? 'this address is not allowed'
            : `host ${hostname} resolves to an address that is not allowed`,
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

/**
 * PATCH /campaign in deployed stages: a webhook URL whose host is, or resolves to, a private,
 * loopback, link-local, CGNAT, multicast, documentation, unique-local or metadata address (any of
 * its addresses) is a validation error on `webhook_url`, as is a host that does not resolve, or not
 * within `DNS_TIMEOUT_MS` (so a slow resolver cannot hold the request past its deadline). The local
 * stack (`allowPrivate`) skips this. Delivery checks again, since DNS can change after this.
 */
export async function checkWebhookDestination(
  webhookUrl: string | null | undefined,
  policy: WebhookUrlPolicy & { resolve?: Resolver },
): Promise<void> {
  if (!webhookUrl || policy.allowPrivate) return;
  const check = await checkDestination(webhookUrl, { allowPrivate: false, resolve: policy.resolve });
  if (!check.ok) throw validationError([{ field: 'webhook_url', message: check.message }]);
}
