/**
 * Reading stored items back: each entity's `fromItem` checks the attributes it uses with these
 * and builds its type from what it checked, instead of casting whatever DynamoDB returned. An item
 * that lacks one, or holds another type, is a defect (a writer bug, a hand edit), reported as an
 * internal error that names the item and the attribute; the API answers it with a 500.
 */
export type StoredItem = Record<string, unknown>;

export class MalformedItemError extends Error {
  constructor(entity: string, item: StoredItem, attribute: string, expected: string) {
    const at = typeof item.PK === 'string' ? `${item.PK} / ${String(item.SK)}` : 'without keys';
    super(`Malformed ${entity} item (${at}): ${attribute} is not ${expected}`);
    this.name = 'MalformedItemError';
  }
}

/** The checks of one entity's items, naming that entity in their errors. */
export function decoder(entity: string) {
  const fail = (item: StoredItem, attribute: string, expected: string): never => {
    throw new MalformedItemError(entity, item, attribute, expected);
  };
  return {
    string(item: StoredItem, attribute: string): string {
      const value = item[attribute];
      return typeof value === 'string' ? value : fail(item, attribute, 'a string');
    },
    number(item: StoredItem, attribute: string): number {
      const value = item[attribute];
      return typeof value === 'number' && Number.isFinite(value) ? value : fail(item, attribute, 'a number');
    },
    /** Absent and NULL are both `null`. */
    nullableString(item: StoredItem, attribute: string): string | null {
      const value = item[attribute];
      if (value === undefined || value === null) return null;
      return typeof value === 'string' ? value : fail(item, attribute, 'a string or null');
    },
    /** Absent is `undefined`. */
    optionalString(item: StoredItem, attribute: string): string | undefined {
      const value = item[attribute];
      if (value === undefined) return undefined;
      return typeof value === 'string' ? value : fail(item, attribute, 'a string');
    },
    fail,
  };
}
