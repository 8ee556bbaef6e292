/**
 * Every part of the document a reader sees a sample of has a realistic example of its own, valid
 * against its own schema: each parameter (path, query, header, the webhooks' signature headers),
 * each request body, each response body (every media type, the error bodies included) and each
 * response header. Redoc otherwise makes samples up from the schemas (`"string"`, a zero UUID).
 * Schemas are checked with the document's own JSON Schema validator (test/support/response-validator.ts).
 * And every operation's `curl` sample (`x-codeSamples`) is a well-formed request made of them.
 */
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lib/openapi/document.ts';
import { examples, LOCAL_BASE_URL } from '../../lib/operations/examples.ts';
import { resolveRoute } from '../../lib/routes.ts';
import { verifyDelivery } from '../../lib/webhooks/verify.ts';
import { parseCurl } from '../client/curl-samples.ts';
import { documentAjv } from '../support/response-validator.ts';

// biome-ignore lint/suspicious/noExplicitAny: the test walks the document as untyped JSON
type Json = Record<string, any>;
const doc = openApiDocument as Json;
const ajv = documentAjv();

const escapePart = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
const pointer = (parts: readonly string[]) => `#/${parts.map(escapePart).join('/')}`;
const partsOf = (ref: string) =>
  ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
const at = (ref: string): Json => partsOf(ref).reduce((node: Json, part) => node[part], doc);

/** A node and where it is, following a `$ref` to its definition. */
const resolve = (node: Json, parts: string[]): { node: Json; parts: string[] } =>
  typeof node.$ref === 'string' ? { node: at(node.$ref), parts: partsOf(node.$ref) } : { node, parts };

/** A place with a schema and the examples shown for it. */
interface Site {
  where: string;
  schema: string[];
  examples: unknown[];
}

/** `example`, or each value of `examples` (following `$ref`s to components.examples). */
const examplesOf = (node: Json): unknown[] => [
  ...('example' in node ? [node.example] : []),
  ...Object.values((node.examples ?? {}) as Record<string, Json>).map((e) => resolve(e, []).node.value),
];

function sitesOfOperation(label: string, parts: string[], op: Json): Site[] {
  const sites: Site[] = [];
  (op.parameters ?? []).forEach((p: Json, i: number) => {
    const { node, parts: at } = resolve(p, [...parts, 'parameters', String(i)]);
    sites.push({
      where: `${label} parameter ${node.name}`,
      schema: [...at, 'schema'],
      examples: examplesOf(node),
    });
  });
  for (const [media, content] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>)) {
    sites.push({
      where: `${label} request body ${media}`,
      schema: [...parts, 'requestBody', 'content', media, 'schema'],
      examples: examplesOf(content),
    });
  }
  for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
    const { node, parts: at } = resolve(response, [...parts, 'responses', status]);
    for (const [media, content] of Object.entries((node.content ?? {}) as Record<string, Json>)) {
      sites.push({
        where: `${label} ${status} body ${media}`,
        schema: [...at, 'content', media, 'schema'],
        examples: examplesOf(content),
      });
    }
    for (const [name, header] of Object.entries((node.headers ?? {}) as Record<string, Json>)) {
      const { node: h, parts: hAt } = resolve(header, [...at, 'headers', name]);
      sites.push({
        where: `${label} ${status} header ${name}`,
        schema: [...hAt, 'schema'],
        examples: examplesOf(h),
      });
    }
  }
  return sites;
}

const operations = [
  ...Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item).map(([verb, op]) => ({
      label: `${verb.toUpperCase()} ${path}`,
      parts: ['paths', path, verb],
      op,
    })),
  ),
  ...Object.entries(doc.webhooks as Record<string, Json>).flatMap(([name, item]) =>
    Object.entries(item).map(([verb, op]) => ({
      label: `webhook ${name}`,
      parts: ['webhooks', name, verb],
      op,
    })),
  ),
];
const sites = operations.flatMap(({ label, parts, op }) => sitesOfOperation(label, parts, op as Json));

/** Every string in a value, however deep. */
const stringsOf = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : value && typeof value === 'object'
      ? Object.values(value).flatMap(stringsOf)
      : [];

describe('examples of the document', () => {
  it('exist for every parameter, request body, response body and response header', () => {
    expect(sites.length).toBeGreaterThan(200);
    const missing = sites.filter((site) => site.examples.length === 0).map((site) => site.where);
    expect(missing).toEqual([]);
  });

  it('are each valid against their own schema', () => {
    const invalid: string[] = [];
    for (const site of sites) {
      const validate = ajv.getSchema(`openapi.json${pointer(site.schema)}`);
      if (!validate) throw new Error(`no schema at ${pointer(site.schema)} (${site.where})`);
      for (const example of site.examples) {
        if (!validate(example)) invalid.push(`${site.where}: ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(invalid).toEqual([]);
  });

  it('are realistic: no placeholder, contract timestamps, UUID v4 campaign ids, https URLs', () => {
    const values = sites.flatMap((site) => site.examples);
    const strings = values.flatMap(stringsOf);
    expect(strings.filter((s) => /^(?:string|example|test|foo|bar)$/i.test(s))).toEqual([]);
    const uuids = strings.flatMap(
      (s) => s.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi) ?? [],
    );
    expect(uuids.length).toBeGreaterThan(10);
    for (const uuid of uuids)
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const createdAt = JSON.stringify(values).match(/"created_at":"[^"]*"/g) ?? [];
    expect(createdAt.length).toBeGreaterThan(10);
    for (const field of createdAt)
      expect(field).toMatch(/^"created_at":"\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}"$/);
    const urls = strings.filter((s) => /^[a-z]+:\/\//.test(s) && !s.startsWith('http://127.0.0.1:3000/'));
    expect(urls.length).toBeGreaterThan(10);
    for (const url of urls) expect(url).toMatch(/^https:\/\/[a-z0-9.-]+\.(?:com|org)\//);
  });

  it("of a webhook verify with the example campaign's webhook_secret, as a receiver would", () => {
    const secret = examples.campaignWithWebhook.webhook_secret;
    for (const [type, item] of Object.entries(doc.webhooks as Record<string, Json>)) {
      const post = item.post as Json;
      const headers = Object.fromEntries(post.parameters.map((p: Json) => [p.name, p.example as string]));
      const body = post.requestBody.content['application/json'].example;
      expect(body.type).toBe(type);
      expect(body.campaign_id).toBe(examples.campaignWithWebhook.id);
      // The receiver's replay window is around the attempt's time.
      const sent = new Date(Number(headers['webhook-timestamp']) * 1000);
      const realNow = Date.now;
      Date.now = () => sent.getTime();
      try {
        expect(verifyDelivery(secret, JSON.stringify(body), headers)).toEqual(body);
      } finally {
        Date.now = realNow;
      }
      expect(headers['webhook-id']).toMatch(
        /^evt_(?:(?:action|referred_user|test)_\d+(?:_[0-9a-f-]{36})?|conversion_cv_[\w-]{40}|refund_cv_[\w-]{40}_\d+|reward_(?:in_review|pending|approved|paid|voided)_rw_[\w-]{54})$/,
      );
    }
  });
});

describe('the curl sample of every operation', () => {
  const routed = operations.filter(({ parts }) => parts[0] === 'paths');

  it('is there, one per operation, as Redoc reads it: x-codeSamples, lang Shell, label curl', () => {
    expect(routed.length).toBeGreaterThan(20);
    for (const { label, op } of routed) {
      const samples = (op as Json)['x-codeSamples'];
      expect(samples, label).toHaveLength(1);
      expect(samples[0], label).toMatchObject({ lang: 'Shell', label: 'curl', source: expect.any(String) });
    }
  });

  it("asks the local stack for the operation's path with valid parameters, with the key where the route needs one", () => {
    for (const { label, parts, op } of routed) {
      const [, path = '', verb = ''] = parts;
      const request = parseCurl((op as Json)['x-codeSamples'][0].source);
      expect(request.method, label).toBe(verb.toUpperCase());
      expect(request.url.origin, label).toBe(LOCAL_BASE_URL);
      const resolved = resolveRoute(verb === 'head' ? 'GET' : verb.toUpperCase(), request.url.pathname);
      expect(resolved.kind, label).toBe('match');
      if (resolved.kind !== 'match') continue;
      expect(resolved.match.route.path, label).toBe(path);
      const params = (op as Json).parameters.map((p: Json) => resolve(p, []).node) as Json[];
      const values: Record<string, string | undefined> = {
        ...resolved.match.pathParameters,
        ...Object.fromEntries(request.url.searchParams),
      };
      for (const name of Object.keys(values)) {
        expect(
          params.map((p) => p.name),
          `${label}: ${name} is a parameter`,
        ).toContain(name);
      }
      for (const p of params.filter((p) => p.in !== 'header')) {
        const value = values[p.name];
        if (p.required) expect(value, `${label}: ${p.name} is required`).toBeDefined();
        if (value === undefined) continue;
        const validate = ajv.compile({
          $ref: `openapi.json${pointer([...parts, 'parameters', String(params.indexOf(p)), 'schema'])}`,
        });
        expect(validate(value), `${label}: ${p.name}=${value}`).toBe(true);
      }
      const needsKey = (op as Json).security === undefined;
      expect(request.headers['api-key'], label).toBe(needsKey ? '$API_KEY' : undefined);
    }
  });

  it('sends a JSON body that parses and is valid against the request schema, wherever the operation takes one', () => {
    for (const { label, parts, op } of routed) {
      const request = parseCurl((op as Json)['x-codeSamples'][0].source);
      const content = (op as Json).requestBody?.content?.['application/json'];
      if (!content || parts[2] === 'head') {
        expect(request.body, label).toBeUndefined();
        continue;
      }
      expect(request.headers['content-type'], label).toBe('application/json');
      const body = JSON.parse(request.body ?? '');
      const validate = ajv.getSchema(
        `openapi.json${pointer([...parts, 'requestBody', 'content', 'application/json', 'schema'])}`,
      )!;
      expect(validate(body), `${label}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(body, label).toEqual(content.example);
    }
  });

  it("quotes for the shell whatever a body holds (a ' included)", () => {
    const source = `curl -X POST '${LOCAL_BASE_URL}/x' -d '${JSON.stringify({ name: "Anna's promo" }).replace(/'/g, "'\\''")}'`;
    expect(JSON.parse(parseCurl(source).body!)).toEqual({ name: "Anna's promo" });
  });
});
