/**
 * An event source mapping's filter criteria, applied locally as Lambda applies them to a table
 * stream record (content filtering, EventBridge pattern syntax): a record passes when it matches
 * at least one pattern; it matches a pattern when every field the pattern names matches; a field
 * matches when its value matches at least one of the pattern's matchers for it.
 *
 * Only the matchers the project's patterns use (`lib/webhooks/stream-filter.ts`,
 * `lib/db/purge-filter.ts`) are implemented: an exact string, and `{ exists: true | false }`.
 * A pattern with anything else throws when it is compiled (at the poller's start), so a pattern
 * the local stack cannot apply is never silently ignored or half applied.
 */

/** A record as JSON: the Lambda event's record (`eventName`, `dynamodb.NewImage...`). */
type Json = unknown;

type FieldTest = (value: Json, present: boolean) => boolean;

export type RecordFilter = (record: Json) => boolean;

/** Compiles `patterns` (throws on a matcher it does not implement); unset passes everything. */
export function compileFilters(patterns: readonly unknown[] | undefined): RecordFilter {
  if (patterns === undefined) return () => true;
  // Would it pass everything, as a mapping without filters, or nothing? Neither is meant.
  if (patterns.length === 0)
    throw new Error('stream filters: an empty list; leave them unset to pass every record');
  const compiled = patterns.map((pattern, i) => compilePattern(pattern, `filters[${i}]`));
  return (record) => compiled.some((matches) => matches(record));
}

function compilePattern(pattern: unknown, path: string): RecordFilter {
  if (!isObject(pattern) || Object.keys(pattern).length === 0) {
    throw new Error(`stream filter ${path}: a pattern is a non-empty object of fields`);
  }
  const fields = Object.entries(pattern).map(([key, spec]): RecordFilter => {
    const at = `${path}.${key}`;
    if (Array.isArray(spec)) {
      const test = compileMatchers(spec, at);
      return (record) => {
        const present = isObject(record) && Object.hasOwn(record, key);
        return test(present ? record[key] : undefined, present);
      };
    }
    const nested = compilePattern(spec, at);
    // Below a missing object every field is absent: only `{ exists: false }` can match there.
    return (record) => nested(isObject(record) && isObject(record[key]) ? record[key] : {});
  });
  return (record) => fields.every((matches) => matches(record));
}

function compileMatchers(matchers: readonly unknown[], path: string): FieldTest {
  if (matchers.length === 0) throw new Error(`stream filter ${path}: an empty list matches nothing`);
  const tests = matchers.map((matcher): FieldTest => {
    if (typeof matcher === 'string') {
      // A list value (a string set) matches when one of its elements does.
      return (value) => value === matcher || (Array.isArray(value) && value.includes(matcher));
    }
    if (isObject(matcher) && Object.keys(matcher).length === 1 && typeof matcher.exists === 'boolean') {
      // `exists` looks at leaves only: a field holding an object does not "exist" for it.
      const wanted = matcher.exists;
      return (value, present) => (present && !isObject(value)) === wanted;
    }
    throw new Error(
      `stream filter ${path}: ${JSON.stringify(matcher)} is not implemented locally (exact strings and { exists } only); implement it in lib/local/stream-filters.ts`,
    );
  });
  return (value, present) => tests.some((test) => test(value, present));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
