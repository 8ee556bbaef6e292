/**
 * The id counters (`lib/db/ids.ts`), one per kind of integer id.
 *
 *   PK `SEQ#<kind>`   SK `SEQ`   no index keys
 */
import { decoder, type StoredItem } from './decode.ts';

export type IdKind = 'link' | 'referred_user' | 'action' | 'conversion';

export function sequenceKey(kind: string) {
  return { PK: `SEQ#${kind}`, SK: 'SEQ' } as const;
}

const field = decoder('id sequence');

/** The last id a counter update reserved (its `UPDATED_NEW` attributes). */
export function lastIdOf(attributes: StoredItem | undefined): number {
  return field.number(attributes ?? {}, 'last_id');
}
