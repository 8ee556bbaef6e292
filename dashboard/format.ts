/** Numbers and times for people. */
const integer = new Intl.NumberFormat('en-US');

/** `12345` → `12,345`. */
export const count = (n: number) => integer.format(n);

/** The contract's `YYYY-MM-DD_HH-MM-SS` (UTC) as a Date. */
export function parseStamp(stamp: string): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2})_(\d{2})-(\d{2})-(\d{2})$/.exec(stamp);
  if (!m) return new Date(Number.NaN);
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!));
}

/** A Date in the contract's form (UTC). */
export function toStamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', '_').replace(/:/g, '-');
}

/** A time the API gave: the contract's `YYYY-MM-DD_HH-MM-SS` (records) or ISO-8601 (deliveries, events). */
export const toDate = (value: string): Date =>
  /^\d{4}-\d\d-\d\d_/.test(value) ? parseStamp(value) : new Date(value);

/** The exact UTC time, for a tooltip: `2026-11-22 14:05:09 UTC`. */
export function exactUtc(value: string): string {
  const date = toDate(value);
  return Number.isNaN(date.getTime()) ? value : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 86400],
  ['month', 30 * 86400],
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** `3 hours ago`, from a time the API gave. */
export function ago(stamp: string, now = Date.now()): string {
  const seconds = Math.round((toDate(stamp).getTime() - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second')
      return relative.format(Math.round(seconds / size), unit);
  }
  return stamp;
}

/** An axis label for a series point: `Nov 22` by day, `Nov 22 14:00` by hour (UTC). */
export function pointLabel(stamp: string, granularity: 'hour' | 'day'): string {
  const date = parseStamp(stamp);
  const day = date.toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
  return granularity === 'day' ? day : `${day} ${String(date.getUTCHours()).padStart(2, '0')}:00`;
}

const clock = (timeZone?: string) =>
  new Intl.DateTimeFormat('en-US', {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    ...(timeZone ? { timeZone } : {}),
  });
const localClock = clock();
const utcClock = clock('UTC');

/** The time in the browser's zone and in UTC, side by side: `Nov 22, 09:05 local · Nov 22, 14:05 UTC`. */
export function localAndUtc(value: string): { local: string; utc: string } {
  const date = toDate(value);
  if (Number.isNaN(date.getTime())) return { local: value, utc: value };
  return { local: localClock.format(date), utc: utcClock.format(date) };
}

const money = new Map<string, { format: Intl.NumberFormat; scale: number }>();

/** How many minor units make one of the currency (100 for USD, 1 for JPY, 1000 for KWD). */
export const minorPerMajor = (currency?: string) =>
  10 **
  (currency
    ? (new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions()
        .maximumFractionDigits ?? 2)
    : 2);

/**
 * Minor units as money in the campaign's currency, with that currency's own minor-unit digits
 * (Intl knows them: 2 for USD, 0 for JPY, 3 for KWD): `1234` → `$12.34`, `1234` JPY → `¥1,234`.
 * Without a currency, two digits and no symbol. `compact` gives an axis label: `$1.2K`.
 */
export function amount(minor: number, currency?: string, compact = false): string {
  const key = `${currency ?? ''}${compact ? '/c' : ''}`;
  let entry = money.get(key);
  if (!entry) {
    const format = new Intl.NumberFormat('en-US', {
      ...(currency
        ? { style: 'currency', currency }
        : { minimumFractionDigits: 2, maximumFractionDigits: 2 }),
      ...(compact ? { notation: 'compact', maximumFractionDigits: 1, minimumFractionDigits: 0 } : {}),
    });
    entry = { format, scale: minorPerMajor(currency) };
    money.set(key, entry);
  }
  return entry.format.format(minor / entry.scale);
}

/** `1 sale`, `2 sales`. */
export const sales = (n: number) => `${count(n)} ${n === 1 ? 'sale' : 'sales'}`;

/** `part` of `whole` as a percentage, or a dash when there is no whole. */
export const percent = (part: number, whole: number) =>
  whole > 0 ? `${(Math.round((part / whole) * 1000) / 10).toLocaleString('en-US')} %` : '—';
