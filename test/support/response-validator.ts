/**
 * Checks a response against the OpenAPI document: the operation the route table resolves the
 * request to, the response documented for the status, its required headers, its media type and
 * (for JSON) its body, with ajv's JSON Schema 2020-12 validator. Test tooling (ajv is a dev
 * dependency; nothing in lib/ or functions/ imports it): the tests' client (`api.ts`) runs every
 * response through it, so a handler that drifts from the document fails.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { type OpenApiDocument, openApiDocument } from '../../lib/openapi/document.ts';
import { resolveRoute } from '../../lib/routes.ts';

export interface ObservedResponse {
  method: string;
  /** The request path, with or without a query string. */
  path: string;
  status: number;
  headers: Headers | Record<string, string>;
  /** The raw body text ('' when there is none). */
  text: string;
}

class ResponseDriftError extends Error {
  constructor(response: ObservedResponse, problems: readonly string[]) {
    const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);
    const body = clip(response.text, 500);
    super(
      `Response to ${response.method} ${clip(response.path, 200)} (${response.status}) does not match the OpenAPI document:\n` +
        `${problems.map((p) => `  - ${p}`).join('\n')}\n  body: ${body}`,
    );
    this.name = 'ResponseDriftError';
  }
}

type Json = { [key: string]: unknown };
const DOCUMENT_ID = 'openapi.json';

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * A strict JSON Schema 2020-12 validator holding the document under the id `openapi.json`, so any
 * schema in it compiles by JSON pointer (`openapi.json#/components/schemas/Campaign`).
 */
export function documentAjv(document: OpenApiDocument = openApiDocument): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, validateFormats: false });
  // The document's own keywords are not JSON Schema; declared, ajv resolves `#/components/...`
  // inside it. `x-max-bytes` is the metadata bound JSON Schema has no keyword for.
  ajv.addVocabulary([
    'openapi',
    'info',
    'servers',
    'paths',
    'webhooks',
    'components',
    'security',
    'tags',
    'jsonSchemaDialect',
    'externalDocs',
    'x-max-bytes',
  ]);
  ajv.addSchema({ ...document, $id: DOCUMENT_ID } as Json);
  return ajv;
}

export class ResponseValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDocument = openApiDocument) {
    this.ajv = documentAjv(document);
  }

  /** Throws a ResponseDriftError listing every way the response differs from the document. */
  check(response: ObservedResponse): void {
    const problems = this.problems(response);
    if (problems.length > 0) throw new ResponseDriftError(response, problems);
  }

  problems(response: ObservedResponse): string[] {
    const method = response.method.toUpperCase();
    const rawPath = new URL(response.path, 'http://local').pathname;
    const resolved = resolveRoute(method, rawPath);
    const headers = new Headers(response.headers as ConstructorParameters<typeof Headers>[0]);

    if (resolved.kind !== 'match') {
      // Unknown paths and methods: the contract's error body, from the gateway's fallback.
      const expected = resolved.kind === 'not_found' ? 404 : 405;
      const problems: string[] = [];
      if (response.status !== expected && response.status !== 429 && response.status !== 500) {
        problems.push(`an unrouted request must answer ${expected}, not ${response.status}`);
      }
      if (!headers.get('x-request-id')) problems.push('the x-request-id header is missing');
      if (method !== 'HEAD') {
        problems.push(...this.validateJson('#/components/schemas/ErrorResponse', response.text, headers));
      }
      return problems;
    }

    const { route } = resolved.match;
    const verb = method === 'HEAD' && route.method === 'GET' ? 'head' : route.method.toLowerCase();
    const operationPath = ['#', 'paths', route.path, verb];
    const operation = this.lookup(operationPath) as { responses?: Record<string, unknown> } | undefined;
    if (!operation?.responses) return [`${method} ${route.path} is not in the document`];

    const status = String(response.status);
    const key = [status, `${status[0]}XX`, 'default'].find((k) => k in (operation.responses ?? {}));
    if (!key) {
      const documented = Object.keys(operation.responses).join(', ');
      return [`status ${status} is not documented for ${method} ${route.path} (documented: ${documented})`];
    }
    const entry = operation.responses[key] as { $ref?: string };
    // A shared response is validated where it is defined, so ajv compiles each schema once.
    const responsePointer =
      typeof entry.$ref === 'string' ? entry.$ref : pointer(...operationPath, 'responses', key);
    const documented = this.deref(entry) as
      | { headers?: Record<string, unknown>; content?: Record<string, unknown> }
      | undefined;
    if (!documented) return [`response ${key} of ${method} ${route.path} cannot be resolved`];

    const problems: string[] = [];
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      const resolvedHeader = this.deref(header) as { required?: boolean };
      if (resolvedHeader.required && !headers.get(name))
        problems.push(`the required header ${name} is missing`);
    }
    if (method === 'HEAD') return problems;

    const content = documented.content;
    if (!content) {
      if (response.text !== '') problems.push(`response ${key} is documented without a body, but has one`);
      return problems;
    }
    const mediaType = (headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (!(mediaType in content)) {
      problems.push(`content type "${mediaType}" is not one of ${Object.keys(content).join(', ')}`);
      return problems;
    }
    if (mediaType === 'application/json') {
      const schemaPointer = `${responsePointer}/content/${pointer(mediaType)}/schema`;
      problems.push(...this.validateJson(schemaPointer, response.text, headers));
    }
    return problems;
  }

  private validateJson(schemaPointer: string, text: string, headers: Headers): string[] {
    const contentType = headers.get('content-type') ?? '';
    if (!/^application\/json\b/i.test(contentType)) return [`content type "${contentType}" is not JSON`];
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return ['the body is not valid JSON'];
    }
    const validate = this.validator(schemaPointer);
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) =>
        `body${e.instancePath || ''} ${e.message ?? 'is invalid'}${
          e.keyword === 'additionalProperties' || e.keyword === 'enum' || e.keyword === 'const'
            ? ` (${JSON.stringify(e.params)})`
            : ''
        }`,
    );
  }

  private validator(schemaPointer: string): ValidateFunction {
    let validate = this.compiled.get(schemaPointer);
    if (!validate) {
      validate = this.ajv.getSchema(`${DOCUMENT_ID}${schemaPointer}`);
      if (!validate) throw new Error(`No schema at ${schemaPointer} in the OpenAPI document`);
      this.compiled.set(schemaPointer, validate);
    }
    return validate;
  }

  /** The value at a path of the document, following `$ref`s on the way. */
  private lookup(path: readonly string[]): unknown {
    let node: unknown = this.document;
    for (const part of path.slice(1)) {
      node = this.deref(node);
      if (node === null || typeof node !== 'object') return undefined;
      node = (node as Json)[part];
    }
    return this.deref(node);
  }

  private deref(node: unknown): unknown {
    let current = node;
    for (let hops = 0; hops < 10; hops++) {
      const ref = (current as { $ref?: unknown } | null)?.$ref;
      if (typeof ref !== 'string' || !ref.startsWith('#/')) return current;
      current = this.lookup(['#', ...ref.slice(2).split('/').map(unescapePointer)]);
    }
    return current;
  }
}

const unescapePointer = (part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~');
