/**
 * DynamoDB Local's stream records as Lambda hands them to a function: the SDK's record (dates as
 * `Date`) turned into the event's JSON shape (dates as epoch seconds), with the stream's ARN, and
 * with the one defect of DynamoDB Local's stream repaired (`repairEmptyMaps`).
 */
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';

export function lambdaRecord(record: _Record, streamArn: string): DynamoDBRecord {
  const { ApproximateCreationDateTime: created, ...dynamodb } = repairEmptyMaps(record).dynamodb ?? {};
  return {
    ...(record as Omit<_Record, 'dynamodb'>),
    eventSourceARN: streamArn,
    dynamodb: {
      ...(dynamodb as DynamoDBRecord['dynamodb']),
      ...(created ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}),
    },
  } as DynamoDBRecord;
}

/**
 * DynamoDB Local (2026-01-16 build) gives `ApproximateCreationDateTime` rounded down to the minute
 * (measured: writes 11 s apart from 13:15:24 to 13:15:57 all carry 13:15:00), where AWS gives the
 * second. For a tumbling window the poller needs the second: the record was created within that
 * minute and before it was read, so the time it was read, kept within that minute, is the best
 * estimate (exact to the poll interval when the poller keeps up; the minute's last moment for a
 * record read later, e.g. after a restart).
 */
export const LOCAL_CREATION_TIME_PRECISION_MS = 60_000;

export function creationTimeMs(record: DynamoDBRecord, readAtMs: number): number {
  const created = record.dynamodb?.ApproximateCreationDateTime;
  if (created === undefined) return readAtMs;
  const from = created * 1000;
  return Math.min(Math.max(readAtMs, from), from + LOCAL_CREATION_TIME_PRECISION_MS - 1);
}

const ATTRIBUTE_TYPES = ['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL'];

/**
 * DynamoDB Local's stream writes an empty map attribute as `{}` instead of `{"M":{}}` (an action
 * without metadata has `metadata: {}`), which no unmarshaller accepts. AWS writes `{"M":{}}`, so
 * the local poller repairs the record to what AWS would have delivered.
 */
export function repairEmptyMaps(record: _Record): _Record {
  const fix = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    const av = value as Record<string, unknown>;
    const kinds = Object.keys(av).filter((k) => ATTRIBUTE_TYPES.includes(k));
    if (kinds.length === 0) return { M: {} };
    if (av.M && typeof av.M === 'object') return { M: fixImage(av.M as Record<string, unknown>) };
    if (Array.isArray(av.L)) return { L: av.L.map(fix) };
    return value;
  };
  const fixImage = (image: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(image).map(([k, v]) => [k, fix(v)]));
  const d = record.dynamodb;
  if (!d) return record;
  return {
    ...record,
    dynamodb: {
      ...d,
      ...(d.NewImage ? { NewImage: fixImage(d.NewImage) as typeof d.NewImage } : {}),
      ...(d.OldImage ? { OldImage: fixImage(d.OldImage) as typeof d.OldImage } : {}),
    },
  };
}
