/**
 * The dashboard's one HTTP client: the public API, same origin, with the api key the user pasted.
 * The key lives in `sessionStorage` only (gone with the tab): never in a URL, a cookie or a log.
 */
import type { components } from '../lib/openapi/api-types.ts';

const KEY_ITEM = 'dashboard.api-key';

/** Told when the API refuses the stored key: the app shows the sign-in form with why. */
const refusedListeners = new Set<() => void>();

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY_ITEM),
  signIn: (key: string) => sessionStorage.setItem(KEY_ITEM, key),
  signOut: () => sessionStorage.removeItem(KEY_ITEM),
  /** Call `listener` each time a 401 signs the session out; returns how to stop. */
  onRefused: (listener: () => void) => {
    refusedListeners.add(listener);
    return () => {
      refusedListeners.delete(listener);
    };
  },
};

/**
 * A 401 to the key in use (revoked, deleted, or changed in storage since sign-in): sign out, so
 * no page keeps showing data and failing on every call as if still signed in. Only when the key
 * sent is still the stored one, so an answer to an older key cannot sign a new one out.
 */
function keyRefused(sent: string | null) {
  if (sent === null || session.key() !== sent) return;
  session.signOut();
  for (const listener of refusedListeners) listener();
}

/** An answer of the API other than a success, with its own message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Page<T> {
  items: T[];
  next: string | null;
  /** The events feed's `x-poll-cursor`: asked again later, it yields only newer events. */
  poll: string | null;
}

type Query = Record<string, string | number | undefined>;

/** The API's base: `api/v1/` beside `dashboard`, so the app also works under a path prefix. */
const apiUrl = (path: string, query: Query = {}) => {
  const url = new URL(`api/v1/${path}`, document.baseURI);
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
  }
  return url;
};

async function call(method: string, path: string, query?: Query, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = session.key();
  if (key) headers['api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(apiUrl(path, query), {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The API could not be reached. Check your connection and retry.');
  }
  if (res.ok) return res;
  if (res.status === 401) keyRefused(key);
  let code = 'http_error';
  let message = `The API answered ${res.status} ${res.statusText}.`;
  try {
    const error = ((await res.json()) as { error?: { code?: string; message?: string } }).error;
    if (error?.code) code = error.code;
    if (error?.message) message = error.message;
  } catch {
    // not the API's JSON error body: keep the status line
  }
  throw new ApiError(res.status, code, message);
}

export async function get<T>(path: string, query?: Query): Promise<T> {
  return (await (await call('GET', path, query)).json()) as T;
}

export async function post<T>(path: string, body?: unknown, query?: Query): Promise<T> {
  return (await (await call('POST', path, query, body)).json()) as T;
}

export async function del(path: string, query?: Query): Promise<void> {
  await call('DELETE', path, query);
}

export async function patch<T>(path: string, body: unknown, query?: Query): Promise<T> {
  return (await (await call('PATCH', path, query, body)).json()) as T;
}

/** One page of a list: its items and the cursor of the next page (`x-next-cursor`), if any. */
export async function page<T>(path: string, query: Query): Promise<Page<T>> {
  const res = await call('GET', path, query);
  return {
    items: (await res.json()) as T[],
    next: res.headers.get('x-next-cursor'),
    poll: res.headers.get('x-poll-cursor'),
  };
}

/*
 * The API's objects, as its OpenAPI document describes them (the committed, generated client types
 * of `npm run openapi:types`): a type-only import, nothing of it reaches the bundle.
 */
type Schemas = components['schemas'];
/** `reward_rules` (issue 30) is read when the API sends it: older stacks do not. */
export type Campaign = Schemas['Campaign'] & { reward_rules?: unknown[] };
/**
 * `share_url` (the URL that counts a visit, `/r/{code}` on the stage's public base) is read when the
 * API sends it; older stacks do not, and the dashboard builds it from its own origin then.
 */
export type Link = Schemas['ReferralLink'] & { share_url?: string };
export type ReferredUser = Schemas['ReferredUser'];
/** A sale (endpoints 23–26): amounts in the minor unit of its currency. */
export type Conversion = Schemas['Conversion'];
/** One delivery attempt of the log (endpoint 18); its times are ISO-8601. */
export type Delivery = Schemas['DeliveryAttempt'];
/** An event of the feed (endpoint 19): the webhook body with its id; its time is ISO-8601. */
export type FeedEvent = Schemas['FeedEvent'];
export type WebhookTestResult = Schemas['WebhookTestResult'];
export type EventType = Campaign['webhook_events'][number];

/** The event types a campaign can subscribe to, as the API names them, with what they mean. */
export const EVENT_TYPES: Array<{ type: EventType; label: string }> = [
  { type: 'action.created', label: 'Actions, visits included (action.created)' },
  { type: 'referred_user.created', label: 'Signups (referred_user.created)' },
  { type: 'conversion.created', label: 'Sales (conversion.created)' },
  { type: 'conversion.refunded', label: 'Refunds (conversion.refunded)' },
  { type: 'reward.created', label: 'Rewards made, on hold (reward.created)' },
  { type: 'reward.approved', label: 'Rewards payable (reward.approved)' },
  { type: 'reward.voided', label: 'Rewards voided (reward.voided)' },
  { type: 'reward.paid', label: 'Rewards paid (reward.paid)' },
  { type: 'reward.flagged', label: 'Rewards held for review (reward.flagged)' },
];

export interface Metrics {
  visits: number;
  unique_visits: number;
  bot_visits: number;
  referred_users: number;
  actions: number;
}

/** With conversions (issue 29), when the API sends them: sales, and their sum in minor units. */
export interface Sales {
  conversions: number;
  revenue: number;
}

export interface Series {
  granularity: 'hour' | 'day';
  from: string;
  to: string;
  totals: Metrics & Partial<Sales>;
  series: Array<Metrics & Partial<Sales> & { start: string }>;
}

export type TopEntry = { rank: number; value: number } & (
  | { referrer_id: string }
  | { referral_link: string | null; referral_link_id: number; referral_code: string }
);

/** A reward's state (endpoint 27's `status` filter). */
export type RewardStatus = Reward['status'];

/** A reward or a (negative) adjustment of the ledger (endpoints 27–29), amounts in minor units. */
export type Reward = Schemas['Reward'];

/** One recipient's sums by state (endpoint 30), minor units. */
export type Balance = Schemas['Balance'];

/** A payout recorded (endpoints 31, 32): what the business paid elsewhere. */
export type Payout = Schemas['Payout'];
