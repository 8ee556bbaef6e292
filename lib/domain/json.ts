/**
 * JSON text of client data, whatever its nesting. `JSON.parse` reads any depth, but V8's
 * `JSON.stringify` recurses and throws a RangeError somewhere past 4,000 levels, and less inside a
 * deep call stack; an 8 KiB metadata object may nest about 4,000 levels and a 32 KiB body 16,000.
 * So the native serializer runs first (fast, and what nearly every value takes) and an iterative
 * one, written here because no small library promises the native output byte for byte, takes over
 * only when it overflows. Both give the same text for what JSON.parse produces.
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return stringifyIteratively(value);
  }
}

/**
 * JSON text with every object's keys in code-unit order: one text for values equal as parsed JSON,
 * whatever the order their members were written in. Iterative, so any depth.
 */
export function canonicalJson(value: unknown): string {
  return stringifyIteratively(value, true);
}

/** A piece of output already made, or a value still to write. */
type Task = { text: string } | { value: unknown; inArray: boolean };

function stringifyIteratively(root: unknown, sortKeys = false): string {
  const out: string[] = [];
  const tasks: Task[] = [{ value: root, inArray: true }];
  for (let task = tasks.pop(); task; task = tasks.pop()) {
    if ('text' in task) {
      out.push(task.text);
      continue;
    }
    let value = task.value;
    if (
      value !== null &&
      typeof value === 'object' &&
      typeof (value as { toJSON?: unknown }).toJSON === 'function'
    ) {
      value = (value as { toJSON: () => unknown }).toJSON();
    }
    if (value === null || typeof value !== 'object') {
      // Primitives as the native serializer writes them; in an array, a missing value is `null`.
      out.push(JSON.stringify(value) ?? (task.inArray ? 'null' : ''));
      continue;
    }
    if (Array.isArray(value)) {
      tasks.push({ text: ']' });
      for (let i = value.length - 1; i >= 0; i--) {
        tasks.push({ value: value[i], inArray: true });
        if (i > 0) tasks.push({ text: ',' });
      }
      tasks.push({ text: '[' });
      continue;
    }
    const entries = Object.keys(value).filter((key) =>
      isSerializable((value as Record<string, unknown>)[key]),
    );
    if (sortKeys) entries.sort();
    tasks.push({ text: '}' });
    for (let i = entries.length - 1; i >= 0; i--) {
      const key = entries[i] as string;
      tasks.push({ value: (value as Record<string, unknown>)[key], inArray: false });
      tasks.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(key)}:` });
    }
    tasks.push({ text: '{' });
  }
  return out.join('');
}

/** Object members the native serializer writes (it skips undefined, functions and symbols). */
function isSerializable(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}

/**
 * Where a JSON value breaks a rule JSON itself cannot express: a number that is not finite (what
 * `JSON.parse` makes of `1e400`; it would be written back as `null`). Iterative for any depth.
 */
export function nonFiniteNumberPath(root: unknown): string | undefined {
  const pending: Array<[unknown, string]> = [[root, '']];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === 'number' && !Number.isFinite(value)) return path;
    if (value !== null && typeof value === 'object') {
      for (const key of Object.keys(value)) {
        pending.push([(value as Record<string, unknown>)[key], path ? `${path}.${key}` : key]);
      }
    }
  }
  return undefined;
}
