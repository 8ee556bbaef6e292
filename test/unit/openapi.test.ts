import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ErrorCode, errorStatus } from '../../lib/domain/errors.ts';
import { errorAnchor } from '../../lib/http/responses.ts';
import { DOCS_CSP } from '../../lib/openapi/docs-page.ts';
import { buildOpenApiDocument, openApiDocument } from '../../lib/openapi/document.ts';
import { operations } from '../../lib/operations/definitions.ts';
import { examples } from '../../lib/operations/examples.ts';
import { routes } from '../../lib/routes.ts';
import { projectRoot } from '../../scripts/openapi-tools.ts';

// biome-ignore lint/suspicious/noExplicitAny: the test walks the document as untyped JSON
type Json = Record<string, any>;
const doc = openApiDocument as Json;
const PUBLIC_PATHS = ['/api/v1/openapi.json', '/r/{referral_code}', '/docs', '/dashboard', '/health'];

const operationsOf = (): Array<{ path: string; verb: string; op: Json }> =>
  Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item).map(([verb, op]) => ({ path, verb, op: op as Json })),
  );

/** Follow a local `$ref` (one level is all the document uses for responses and headers). */
const deref = (node: Json): Json =>
  typeof node.$ref === 'string'
    ? (node.$ref as string)
        .slice(2)
        .split('/')
        .reduce((n: Json, part: string) => n[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc)
    : node;

describe('per-route operations', () => {
  it('exist for every row of the route table, and for nothing else', () => {
    expect(Object.keys(operations).sort()).toEqual(routes.map((r) => r.name).sort());
  });

  it('are what each handler enforces: it passes its own generated operation to httpHandler', () => {
    for (const route of routes) {
      const source = readFileSync(join(projectRoot, 'functions', `${route.handler}.ts`), 'utf8');
      expect(source, `${route.handler} must import its operation`).toMatch(
        new RegExp(`import \\{ ${route.name} \\} from '../../lib/operations/compiled.ts'`),
      );
      // httpHandler(X, …) or httpHandler({ ...X, storedAnswers, … }, …): the row's own operation.
      expect(source, `${route.handler} must validate with ${route.name}`).toMatch(
        new RegExp(`httpHandler\\(\\s*(\\{ \\.\\.\\.)?${route.name}\\b`),
      );
      // No validator or schema of its own beside the operation's.
      expect(source).not.toMatch(/compileValidator|@sinclair\/typebox|domain\/(link-)?schemas/);
    }
  });

  it('makes the document builder fail loudly for an operation without an example of a part', () => {
    const row = routes.find((r) => r.name === 'GetReferralLink')!;
    const without = (example: object) => ({ GetReferralLink: { ...operations.GetReferralLink, example } });
    const { example } = operations.GetReferralLink;
    expect(() => buildOpenApiDocument([row], without({ ...example, query: { id: '7' } }))).toThrow(
      /GetReferralLink: no example for the parameter referral_code/,
    );
    expect(() => buildOpenApiDocument([row], without({ ...example, response: undefined }))).toThrow(
      /GetReferralLink: no example of the application\/json response/,
    );
    const create = routes.find((r) => r.name === 'CreateCampaign')!;
    const { body: _, ...noBody } = operations.CreateCampaign.example;
    expect(() =>
      buildOpenApiDocument([create], { CreateCampaign: { ...operations.CreateCampaign, example: noBody } }),
    ).toThrow(/CreateCampaign: no example of the request body/);
  });

  it('makes the document builder fail loudly for a row without an operation', () => {
    const row = { ...routes[0]!, name: 'NoSuchRoute' };
    expect(() => buildOpenApiDocument([row])).toThrow(/NoSuchRoute has no operation/);
  });
});

describe("the reference page's content security policy", () => {
  it('lets the page use nothing but its own origin, its own bootstrap, inline styles and data:/blob: URLs it makes', () => {
    const directives = Object.fromEntries(
      DOCS_CSP.split(';').map((d) => {
        const [name = '', ...sources] = d.trim().split(/\s+/);
        return [name, sources];
      }),
    );
    expect(directives['default-src']).toEqual(["'none'"]);
    const allowed = /^(?:'self'|'none'|'unsafe-inline'|'sha256-[A-Za-z0-9+/]+=*'|data:|blob:)$/;
    for (const [name, sources] of Object.entries(directives)) {
      for (const source of sources) expect(source, `${name} ${source}`).toMatch(allowed);
    }
    expect(directives['script-src']).not.toContain("'unsafe-inline'");
    expect(directives['connect-src']).toEqual(["'self'"]);
  });
});

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with every route of the table under its path and method', () => {
    expect(doc.openapi).toBe('3.1.0');
    for (const route of routes) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op.operationId).toBe(route.name);
      expect(op.summary).toBe(route.summary);
      if (route.method === 'GET') expect(doc.paths[route.path].head, `HEAD ${route.path}`).toBeDefined();
    }
    expect(operationsOf()).toHaveLength(routes.length + routes.filter((r) => r.method === 'GET').length);
  });

  it('says its version, which its own example repeats, and its versioning policy', () => {
    expect(doc.info.version).toMatch(/^1\.\d+\.\d+$/);
    expect(examples.openApiDocument.info).toEqual({ title: doc.info.title, version: doc.info.version });
    expect(doc.info.description).toMatch(/^# Versioning$/m);
  });

  it('is plain JSON: no TypeBox symbol keys, and it survives a JSON round trip unchanged', () => {
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      expect(Object.getOwnPropertySymbols(node)).toEqual([]);
      for (const value of Object.values(node)) walk(value);
    };
    walk(doc);
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('refers to shared schemas instead of repeating them, and every $ref resolves', () => {
    const text = JSON.stringify(doc);
    for (const name of ['Campaign', 'ReferralLink', 'ReferredUser', 'Action', 'ErrorResponse']) {
      expect(doc.components.schemas[name]).toBeDefined();
      expect(text).toContain(`"#/components/schemas/${name}"`);
    }
    // The link object is written out once, not inside every response that contains one.
    expect(text.match(/"total_referrals":\{/g)).toHaveLength(1);
    for (const [, ref] of text.matchAll(/"\$ref":"([^"]+)"/g)) {
      expect(deref({ $ref: ref }), ref).toBeDefined();
    }
  });

  it('uses the api-key header as the security scheme, everywhere but the public routes', () => {
    expect(doc.components.securitySchemes.ApiKey).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'api-key' }),
    );
    expect(doc.security).toEqual([{ ApiKey: [] }]);
    for (const { path, verb, op } of operationsOf()) {
      if (PUBLIC_PATHS.includes(path)) expect(op.security, `${verb} ${path}`).toEqual([]);
      else {
        expect(op.security, `${verb} ${path} inherits the api key`).toBeUndefined();
        expect(Object.keys(op.responses)).toContain('401');
      }
    }
  });

  it('gives every operation a success response (2xx, or the redirect) and x-request-id on every response', () => {
    for (const { path, verb, op } of operationsOf()) {
      const statuses = Object.keys(op.responses);
      expect(
        statuses.some((s) => s.startsWith('2') || (path === '/r/{referral_code}' && s === '302')),
        `${verb} ${path}`,
      ).toBe(true);
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        expect(deref(response).headers?.['x-request-id'], `${verb} ${path} ${status}`).toBeDefined();
      }
    }
  });

  it('documents the error codes of each route with the error body, narrowed to those codes', () => {
    const get = doc.paths['/api/v1/campaign'].get.responses;
    const notFound = deref(get['404']).content['application/json'].schema;
    expect(notFound.allOf).toEqual([{ $ref: '#/components/schemas/ErrorResponse' }]);
    expect(notFound.properties.error.properties.code.enum).toEqual(['campaign_not_found']);
    expect(
      deref(get['400']).content['application/json'].schema.properties.error.properties.code.enum,
    ).toEqual(['validation_failed', 'missing_parameter']);
    const signup = doc.paths['/api/v1/referred_user'].post.responses;
    expect(Object.keys(signup).sort()).toEqual([
      '201',
      '400',
      '401',
      '404',
      '409',
      '413',
      '415',
      '422',
      '429',
      '431',
      '500',
      '503',
    ]);
    // The redirect answers 404 for a malformed code, it does not validate it.
    expect(Object.keys(doc.paths['/r/{referral_code}'].get.responses)).not.toContain('400');
    // Every code of the contract is in some operation's responses.
    const codes = new Set(
      operationsOf().flatMap(({ op }) =>
        Object.values(op.responses as Record<string, Json>).flatMap(
          (r) =>
            deref(r).content?.['application/json']?.schema?.properties?.error?.properties?.code?.enum ?? [],
        ),
      ),
    );
    const routeLevel = Object.keys(errorStatus).filter(
      (c) => c !== 'route_not_found' && c !== 'method_not_allowed',
    );
    expect([...codes].sort()).toEqual(routeLevel.sort()); // those two are the gateway fallback's
  });

  it("has an entry per error code in the description's Errors section, the anchor of every doc_url", () => {
    const description = doc.info.description as string;
    const [, errors = ''] = description.split(/^# Errors$/m);
    // The last top-level section, so that its `##` entries are its own (Redoc nests them under it).
    expect(errors).not.toMatch(/^# /m);
    const entries = [...errors.matchAll(/^## (\S+)$/gm)].map((m) => m[1]);
    expect(entries).toEqual(Object.keys(errorStatus));
    for (const code of Object.keys(errorStatus) as ErrorCode[]) {
      expect(errorAnchor(code)).toBe(`section/Errors/${code}`);
      expect(errors).toContain(`## ${code}\nStatus **${errorStatus[code]}**.`);
    }
    // Every error body carries doc_url; the examples show it.
    expect(doc.components.schemas.ErrorResponse.properties.error.required).toContain('doc_url');
    for (const [code, example] of Object.entries(doc.components.examples as Record<string, Json>)) {
      expect(example.value.error.doc_url).toBe(`http://127.0.0.1:3000/docs#section/Errors/${code}`);
    }
  });

  it('documents Retry-After (whole seconds, optional) on every 429', () => {
    for (const { path, verb, op } of operationsOf()) {
      const tooMany = deref((op.responses as Record<string, Json>)['429'] as Json);
      const retryAfter = deref(tooMany.headers['retry-after']);
      expect(retryAfter, `${verb} ${path}`).toMatchObject({ schema: { type: 'integer', minimum: 1 } });
      expect(retryAfter.required, `${verb} ${path}`).toBeUndefined();
    }
  });

  it("documents redelivery's cap per event on its 429, and only there", () => {
    const own = (op: Json) =>
      deref((op.responses as Record<string, Json>)['429'] as Json).description as string;
    for (const { path, verb, op } of operationsOf()) {
      if (path === '/api/v1/events/{event_id}/redeliver' && verb === 'post')
        expect(own(op)).toMatch(/redelivered 5 times in this clock hour.*Retry-After/);
      else expect(own(op), `${verb} ${path}`).not.toMatch(/redelivered/);
    }
  });

  it('has path and query parameters with their required flags, and the request bodies', () => {
    const list = doc.paths['/api/v1/referral_link/{campaign_id}/{referrer_id}'].get;
    expect(list.parameters.map((p: Json) => [p.name, p.in, p.required])).toEqual([
      ['campaign_id', 'path', true],
      ['referrer_id', 'path', true],
      ['limit', 'query', false],
      ['cursor', 'query', false],
    ]);
    const getUser = doc.paths['/api/v1/referred_user'].get;
    expect(getUser.parameters.map((p: Json) => [p.name, p.required])).toEqual([
      ['campaign_id', true],
      ['referred_user_id', true],
    ]);
    expect(doc.paths['/api/v1/campaign'].post.requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/CreateCampaignBody' },
          example: {
            url: 'https://shop.example.com/welcome',
            name: 'Spring referral promo',
            click_ids: true,
          },
        },
      },
    });
    expect(doc.paths['/api/v1/campaign'].patch.requestBody.required).toBe(false);
  });

  it('documents the list headers, the redirect, the empty delete and the reference page', () => {
    for (const path of [
      '/api/v1/campaign_referral_links/{campaign_id}',
      '/api/v1/referral_link/{campaign_id}/{referrer_id}',
    ]) {
      expect(Object.keys(doc.paths[path].get.responses['200'].headers)).toEqual([
        'x-request-id',
        'link',
        'x-next-cursor',
      ]);
    }
    const redirect = doc.paths['/r/{referral_code}'].get.responses['302'];
    expect(redirect.headers.location).toEqual({ $ref: '#/components/headers/Location' });
    expect(redirect.content).toBeUndefined();
    const deleted = doc.paths['/api/v1/campaign'].delete.responses['204'];
    expect(deleted.content).toBeUndefined();
    expect(Object.keys(doc.paths['/docs'].get.responses['200'].content)).toEqual([
      'text/html',
      'text/javascript',
    ]);
  });

  it('describes every webhook payload, webhook.test included, with the Standard Webhooks headers', () => {
    expect(Object.keys(doc.webhooks)).toEqual([
      'action.created',
      'referred_user.created',
      'conversion.created',
      'conversion.refunded',
      'reward.created',
      'reward.flagged',
      'reward.approved',
      'reward.paid',
      'reward.voided',
      'webhook.test',
    ]);
    for (const [type, item] of Object.entries(doc.webhooks as Record<string, Json>)) {
      expect(item.post.parameters.map((p: Json) => [p.name, p.in, p.required])).toEqual([
        ['webhook-id', 'header', true],
        ['webhook-timestamp', 'header', true],
        ['webhook-signature', 'header', true],
      ]);
      const ref = item.post.requestBody.content['application/json'].schema.$ref as string;
      const schema = deref({ $ref: ref });
      expect(schema.properties.type.const).toBe(type);
      expect(schema.required).toEqual(['type', 'timestamp', 'campaign_id', 'data']);
    }
    expect(doc.components.schemas.ActionCreatedEvent.properties.data).toEqual({
      $ref: '#/components/schemas/Action',
    });
    expect(doc.components.schemas.ReferredUserCreatedEvent.properties.data).toEqual({
      $ref: '#/components/schemas/ReferredUser',
    });
    expect(doc.webhooks['webhook.test'].post.operationId).toBe('WebhookTestWebhook');
  });
});
