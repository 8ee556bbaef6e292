/** The contract's timestamp format: UTC `YYYY-MM-DD_HH-MM-SS`. */
export function formatTimestamp(date: Date): string {
  return timestampOfIso(date.toISOString());
}

/** The contract timestamp of an ISO 8601 UTC string (`2026-11-22T14:05:09.123Z`). */
export function timestampOfIso(iso: string): string {
  return `${iso.slice(0, 10)}_${iso.slice(11, 13)}-${iso.slice(14, 16)}-${iso.slice(17, 19)}`;
}

const timestampPattern = /^(\d{4})-(\d{2})-(\d{2})_(\d{2})-(\d{2})-(\d{2})$/;

/** Parse a contract timestamp back into a Date (UTC); undefined when malformed. */
export function parseTimestamp(value: string): Date | undefined {
  const m = timestampPattern.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
  // Date rolls impossible values over (30 February -> 2 March, 24:00 -> next day): only a value
  // that formats back to itself is a real timestamp.
  if (Number.isNaN(date.getTime()) || formatTimestamp(date) !== value) return undefined;
  return date;
}
