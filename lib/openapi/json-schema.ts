/**
 * TypeBox schemas are JSON Schema already; the document needs them as plain JSON (TypeBox's symbol
 * keys such as `[Kind]` dropped) and with the shared ones referenced from `components.schemas`
 * instead of repeated inline.
 */
import type { TSchema } from '@sinclair/typebox';

export type JsonSchema = { [key: string]: unknown };

/**
 * Schemas that get a name in `components.schemas`, recognised by identity: the handlers, the other
 * schemas and this registry all hold the very same TypeBox objects, so a schema used anywhere in the
 * document becomes a `$ref` to its one definition.
 */
export class SchemaRegistry {
  private readonly names = new Map<object, string>();

  constructor(private readonly named: Readonly<Record<string, TSchema>>) {
    for (const [name, schema] of Object.entries(named)) {
      if (this.names.has(schema)) throw new Error(`Schema ${name} is registered twice`);
      this.names.set(schema, name);
    }
  }

  /** The JSON form of `schema` for use inside the document: a `$ref` when it has a name. */
  use(schema: TSchema): JsonSchema {
    return this.convert(schema, undefined) as JsonSchema;
  }

  /** The name a schema is registered under, if any. */
  nameOf(schema: TSchema): string | undefined {
    return this.names.get(schema);
  }

  /** `components.schemas`: each named schema written out once, referring to the others. */
  components(): Record<string, JsonSchema> {
    const out: Record<string, JsonSchema> = {};
    for (const [name, schema] of Object.entries(this.named)) {
      out[name] = this.convert(schema, schema) as JsonSchema;
    }
    return out;
  }

  private convert(value: unknown, defining: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => this.convert(item, defining));
    if (value === null || typeof value !== 'object') return value;
    const name = this.names.get(value);
    if (name !== undefined && value !== defining) return { $ref: `#/components/schemas/${name}` };
    const out: JsonSchema = {};
    // Object.keys skips symbol keys, which is what drops TypeBox's [Kind], [OptionalKind] and [Hint].
    for (const key of Object.keys(value)) {
      out[key] = this.convert((value as Record<string, unknown>)[key], defining);
    }
    return out;
  }
}
