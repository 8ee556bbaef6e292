/**
 * The OpenAPI 3.1 document, built at module load from the route table (`lib/routes.ts`) and each
 * route's operation (`lib/operations/definitions.ts`): the very schemas and request rules its
 * validators are generated from. Nothing here restates a schema or a rule: it only arranges them.
 */
import { createHmac } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import { Conversion, CreateConversionBody, RefundBody } from '../domain/conversion-schemas.ts';
import { type ErrorCode, errorStatus } from '../domain/errors.ts';
import {
  Action,
  CreateLinkActionBody,
  CreateLinkBody,
  CreateReferredUserBody,
  CreateUserActionBody,
  DEFAULT_LIST_LIMIT,
  ReferralLink,
  ReferredUser,
} from '../domain/link-schemas.ts';
import { Balance, Payout, Reward } from '../domain/reward-schemas.ts';
import {
  Campaign,
  CreateCampaignBody,
  ErrorResponse,
  Timestamp,
  UpdateCampaignBody,
  Uuid,
} from '../domain/schemas.ts';
import { DeliveryAttempt, FeedEvent, WebhookTestResult } from '../domain/webhook-schemas.ts';
import { MAX_BODY_BYTES } from '../http/request.ts';
import { errorDocUrl } from '../http/responses.ts';
import type { MediaType, OperationDefinition, ResponseHeader } from '../operations/definition.ts';
import { tags } from '../operations/definition.ts';
import { operations as operationTable } from '../operations/definitions.ts';
import { examples, LOCAL_BASE_URL } from '../operations/examples.ts';
import { answersHead, type RouteDefinition, routes as routeTable } from '../routes.ts';
import { errorMeanings } from './errors.ts';
import { type JsonSchema, SchemaRegistry } from './json-schema.ts';
import {
  ActionCreatedEvent,
  ConversionCreatedEvent,
  ConversionRefundedEvent,
  ReferredUserCreatedEvent,
  RewardApprovedEvent,
  RewardCreatedEvent,
  RewardFlaggedEvent,
  RewardPaidEvent,
  RewardVoidedEvent,
  WebhookTestEvent,
  webhookEvents,
} from './webhooks.ts';

export type OpenApiDocument = JsonSchema & {
  openapi: '3.1.0';
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema> } & JsonSchema;
};

const registry = new SchemaRegistry({
  Campaign,
  ReferralLink,
  ReferredUser,
  Action,
  Conversion,
  ErrorResponse,
  CreateCampaignBody,
  UpdateCampaignBody,
  CreateLinkBody,
  CreateReferredUserBody,
  CreateUserActionBody,
  CreateLinkActionBody,
  CreateConversionBody,
  RefundBody,
  ActionCreatedEvent,
  ReferredUserCreatedEvent,
  ConversionCreatedEvent,
  ConversionRefundedEvent,
  Reward,
  Balance,
  Payout,
  RewardCreatedEvent,
  RewardFlaggedEvent,
  RewardApprovedEvent,
  RewardPaidEvent,
  RewardVoidedEvent,
  WebhookTestEvent,
  DeliveryAttempt,
  FeedEvent,
  WebhookTestResult,
  Uuid,
  Timestamp,
});

const JSON_MEDIA = 'application/json';
const SECURITY_SCHEME = 'ApiKey';

const headerRefs: Record<ResponseHeader | 'x-request-id', string> = {
  'x-request-id': 'XRequestId',
  link: 'Link',
  'x-next-cursor': 'XNextCursor',
  'x-poll-cursor': 'XPollCursor',
  location: 'Location',
  'idempotent-replayed': 'IdempotentReplayed',
};

const headerComponents: Record<string, JsonSchema> = {
  XRequestId: {
    description:
      "Id of this request, URL-safe: API Gateway's request id in base64url without padding. Quote it when asking for support.",
    required: true,
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
    example: examples.requestId,
  },
  Link: {
    description:
      'Present while more items remain: `<path?limit=…&cursor=…>; rel="next"`, the URL of the next page. Absent on the last page.',
    schema: { type: 'string' },
    example: `</api/v1/campaign_referral_links/${examples.campaignId}?limit=100&cursor=${examples.cursor}>; rel="next"`,
  },
  XNextCursor: {
    description:
      'Present while more items remain: the opaque cursor of the next page. Absent on the last page.',
    schema: { type: 'string' },
    example: examples.cursor,
  },
  XPollCursor: {
    description:
      'On every page of the events feed: where a later request continues (after the last event of this page, or where an empty page started). Keep the last one and poll with it as `cursor`: it yields only events newer than those already read.',
    required: true,
    schema: { type: 'string' },
    example: examples.feedCursor,
  },
  Location: {
    description:
      'The referral link: the campaign URL with `rfa=<code>` added; when the campaign has `click_ids` on and the visit is counted (not a bot, not `HEAD`), `rfclid=<click id>` right after it.',
    required: true,
    schema: { type: 'string', format: 'uri' },
    example: examples.location,
  },
  RetryAfter: {
    description:
      "Whole seconds to wait before trying again. Sent with every 503 and with every 429 the service answers itself; a deployed stage's throttling is answered by API Gateway, without it.",
    schema: { type: 'integer', minimum: 1 },
    example: 1,
  },
  IdempotentReplayed: {
    description:
      '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`: nothing was written again.',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  },
};

/** The header every POST may carry (contract, "Idempotent retries"). */
const idempotencyKeyParameter: JsonSchema = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the first request with a key runs and its 2xx answer is stored with its write, kept at least 24 hours; a retry with the same key, method, path and body (as parsed JSON) gets that answer again, with `Idempotent-Replayed: true`, and writes nothing. Scoped to your account. Another request with a used key is 422 `idempotency_key_reused`.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
  example: examples.idempotencyKey,
};

/** A POST behind the key: it takes `Idempotency-Key`. */
const takesIdempotencyKey = (route: RouteDefinition) => route.method === 'POST' && route.auth;

const withRequestId = (headers: readonly ResponseHeader[] = []) =>
  Object.fromEntries(
    (['x-request-id', ...headers] as const).map((h) => [
      h,
      { $ref: `#/components/headers/${headerRefs[h]}` },
    ]),
  );

/** Errors an operation can answer besides its own: auth, input parsing, size, throttling, crashes. */
function commonErrors(route: RouteDefinition, meta: OperationDefinition): ErrorCode[] {
  const codes: ErrorCode[] = [];
  const request = meta.request ?? {};
  if (request.body) codes.push('invalid_json', 'validation_failed', 'unsupported_media_type');
  if (request.query) codes.push('validation_failed');
  if (request.query?.required?.length || request.queryAtLeastOne) codes.push('missing_parameter');
  // What the request rules answer: a refused field's own code, a path that fails its schema.
  for (const refused of Object.values(request.refusedFields ?? {})) codes.push(refused.code);
  if (request.path) codes.push(request.pathNotFound?.code ?? 'validation_failed');
  if (route.auth) codes.push('unauthorized');
  if (takesIdempotencyKey(route)) codes.push('idempotency_key_in_progress', 'idempotency_key_reused');
  // Every route that reads the table (the authorizer does for every keyed one) can find it unavailable.
  if (route.table !== 'none' || route.auth) codes.push('service_unavailable');
  // Any request can be too large: the body past 32 KiB (413), or the request line and headers past
  // the server's limit before any handler runs (431).
  codes.push('payload_too_large', 'request_headers_too_large', 'rate_limited', 'internal_error');
  return codes;
}

function errorExample(code: ErrorCode): JsonSchema {
  const error: JsonSchema = { code, message: errorMeanings[code].example };
  if (code === 'validation_failed') error.details = [{ field: 'campaign_id', message: 'must be a UUID' }];
  if (code === 'missing_parameter') error.details = [{ field: 'id', message: 'is required' }];
  error.doc_url = errorDocUrl(code, LOCAL_BASE_URL);
  return { summary: code, value: { error } };
}

/** Responses and examples shared between operations, collected while the paths are built. */
interface SharedComponents {
  responses: Record<string, JsonSchema>;
  examples: Record<string, JsonSchema>;
}

/**
 * One response per error status, its body narrowed to the codes this operation can give. A status
 * with a single code is a shared `components.responses` entry named after the code.
 */
function errorResponses(
  shared: SharedComponents,
  codes: readonly ErrorCode[],
  withBody = true,
  notes: OperationDefinition['errorNotes'] = {},
): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = errorStatus[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, JsonSchema> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const response: JsonSchema = {
      description: list
        .map((code) => `\`${code}\`: ${errorMeanings[code].when}${notes?.[code] ? ` ${notes[code]}` : ''}`)
        .join('\n\n'),
      headers:
        status === errorStatus.rate_limited || status === errorStatus.service_unavailable
          ? { ...withRequestId(), 'retry-after': { $ref: '#/components/headers/RetryAfter' } }
          : withRequestId(),
    };
    if (!withBody) {
      out[String(status)] = response;
      continue;
    }
    for (const code of list) shared.examples[code] ??= errorExample(code);
    response.content = {
      [JSON_MEDIA]: {
        schema: {
          allOf: [registry.use(ErrorResponse)],
          type: 'object',
          properties: { error: { type: 'object', properties: { code: { type: 'string', enum: list } } } },
        },
        examples: Object.fromEntries(list.map((code) => [code, { $ref: `#/components/examples/${code}` }])),
      },
    };
    const [only] = list;
    // A code with this operation's own note is its own response, not the shared one.
    if (list.length === 1 && only && !notes?.[only]) {
      shared.responses[only] ??= response;
      out[String(status)] = { $ref: `#/components/responses/${only}` };
    } else out[String(status)] = response;
  }
  return out;
}

function pathParameters(route: RouteDefinition, meta: OperationDefinition): JsonSchema[] {
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  const schemas = (meta.request?.path?.properties ?? {}) as Record<string, TSchema>;
  const declared = Object.keys(schemas);
  if (names.length !== declared.length || names.some((name) => !declared.includes(name))) {
    throw new Error(`Route ${route.name}: path parameters ${names} but the operation declares ${declared}`);
  }
  return names.map((name) =>
    parameter(name, 'path', schemas[name] as TSchema, true, exampleOf(route, meta.example.path, name)),
  );
}

function queryParameters(route: RouteDefinition, meta: OperationDefinition): JsonSchema[] {
  const query = meta.request?.query;
  if (!query) return [];
  const required = new Set(query.required ?? []);
  return Object.entries(query.properties).map(([name, schema]) =>
    parameter(name, 'query', schema, required.has(name), exampleOf(route, meta.example.query, name)),
  );
}

function bodyExample(route: RouteDefinition, meta: OperationDefinition) {
  if (!meta.example.body) throw new Error(`Route ${route.name}: no example of the request body`);
  return meta.example.body;
}

/** A parameter's example: every parameter has one, or the document is not built. */
function exampleOf(
  route: RouteDefinition,
  values: Readonly<Record<string, string>> | undefined,
  name: string,
) {
  const value = values?.[name];
  if (value === undefined) throw new Error(`Route ${route.name}: no example for the parameter ${name}`);
  return value;
}

function parameter(
  name: string,
  location: 'path' | 'query',
  schema: TSchema,
  required: boolean,
  example: string,
): JsonSchema {
  return {
    name,
    in: location,
    required,
    ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
    schema: registry.use(schema),
    example,
  };
}

function successResponse(
  route: RouteDefinition,
  meta: OperationDefinition,
  withBody = true,
  replayable = false,
): JsonSchema {
  const { success, example } = meta;
  const media = success.media ?? [JSON_MEDIA];
  const exampleFor = (type: MediaType) => {
    const value = example.responses?.[type] ?? (type === JSON_MEDIA ? example.response : undefined);
    if (value === undefined) throw new Error(`Route ${route.name}: no example of the ${type} response`);
    return value;
  };
  return {
    description: success.description,
    headers: withRequestId([
      ...(success.headers ?? []),
      ...(replayable ? (['idempotent-replayed'] as const) : []),
    ]),
    ...(success.schema && withBody
      ? {
          content: Object.fromEntries(
            media.map((type) => [
              type,
              { schema: registry.use(success.schema as TSchema), example: exampleFor(type) },
            ]),
          ),
        }
      : {}),
  };
}

/** Shell single quotes around any text: a `'` inside is closed, escaped and reopened. */
const shellQuote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

/**
 * The operation's `curl` sample (`x-codeSamples`, which Redoc shows beside the request): its example
 * request against the local stack, with the key from `$API_KEY` where the route needs one.
 * Headers are shown (`-i`, `-I`) where the answer is in them: a redirect, a list's next page.
 */
function curlSamples(route: RouteDefinition, meta: OperationDefinition, head = false): JsonSchema[] {
  const { example } = meta;
  const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(exampleOf(route, example.path, name)),
  );
  const sent = example.sampleQuery ?? Object.keys(example.query ?? {});
  const query = new URLSearchParams(
    sent.map((name): [string, string] => [name, exampleOf(route, example.query, name)]),
  );
  const url = `${LOCAL_BASE_URL}${path}${sent.length ? `?${query}` : ''}`;
  const showHeaders = (meta.success.headers ?? []).some((h) => h === 'location' || h === 'link');
  const flags = head
    ? ['-I']
    : [...(route.method === 'GET' ? [] : [`-X ${route.method}`]), ...(showHeaders ? ['-i'] : [])];
  const lines = [['curl', ...flags, shellQuote(url)].join(' ')];
  if (route.auth) lines.push('-H "api-key: $API_KEY"');
  if (meta.request?.body && !head) {
    lines.push(
      `-H ${shellQuote('content-type: application/json')}`,
      `-d ${shellQuote(JSON.stringify(bodyExample(route, meta)))}`,
    );
  }
  return [{ lang: 'Shell', label: 'curl', source: lines.join(' \\\n  ') }];
}

function operation(shared: SharedComponents, route: RouteDefinition, meta: OperationDefinition): JsonSchema {
  const errors = [...commonErrors(route, meta), ...(meta.errors ?? [])];
  return {
    operationId: route.name,
    summary: route.summary,
    description: meta.description,
    tags: [meta.tag],
    ...(route.auth ? {} : { security: [] }),
    parameters: [
      ...pathParameters(route, meta),
      ...queryParameters(route, meta),
      ...(takesIdempotencyKey(route) ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
    ],
    ...(meta.request?.body
      ? {
          requestBody: {
            required: !meta.request.bodyOptional,
            content: {
              [JSON_MEDIA]: { schema: registry.use(meta.request.body), example: bodyExample(route, meta) },
            },
          },
        }
      : {}),
    responses: {
      [String(meta.success.status)]: successResponse(route, meta, true, takesIdempotencyKey(route)),
      ...errorResponses(shared, errors, true, meta.errorNotes),
    },
    'x-codeSamples': curlSamples(route, meta),
  };
}

/** The `HEAD` twin of a GET row: the same answer without a body. */
function headOperation(
  shared: SharedComponents,
  route: RouteDefinition,
  meta: OperationDefinition,
): JsonSchema {
  const errors = [...commonErrors(route, meta), ...(meta.errors ?? [])];
  return {
    operationId: `${route.name}Head`,
    summary: `${route.summary} (HEAD: never recorded)`,
    description: `The same as \`GET ${route.path}\` without a body; a \`HEAD\` request is never recorded.`,
    tags: [meta.tag],
    ...(route.auth ? {} : { security: [] }),
    parameters: [...pathParameters(route, meta), ...queryParameters(route, meta)],
    responses: {
      [String(meta.success.status)]: successResponse(route, meta, false),
      ...errorResponses(shared, errors, false),
    },
    'x-codeSamples': curlSamples(route, meta, true),
  };
}

/**
 * The Standard Webhooks signature of an example delivery, made as the delivery makes it (over the
 * compact JSON sent), so that the example headers verify with the example campaign's secret.
 */
function exampleSignature(id: string, timestamp: number, body: unknown): string {
  const secret = Buffer.from(examples.campaignWithWebhook.webhook_secret.slice('whsec_'.length), 'base64');
  const mac = createHmac('sha256', secret).update(`${id}.${timestamp}.${JSON.stringify(body)}`);
  return `v1,${mac.digest('base64')}`;
}

function webhooks(): Record<string, JsonSchema> {
  const header = (name: string, description: string, example: string) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
    example,
  });
  return Object.fromEntries(
    webhookEvents.map(({ type, schema, summary, operationId }) => {
      const { id, body } = examples.webhooks[type];
      // The first attempt, a moment after the event.
      const timestamp = Math.floor(Date.parse(body.timestamp) / 1000) + 1;
      const parameters = [
        header('webhook-id', 'Id of the event, the same on every retry: use it to drop duplicates.', id),
        header('webhook-timestamp', 'Unix time (seconds) of this attempt.', String(timestamp)),
        header(
          'webhook-signature',
          "Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the campaign's `webhook_secret` after `whsec_`. For 24 h after a secret rotation it holds two signatures, space-separated (new secret first): accept the request when either verifies. The example is the signature of the example body, sent as compact JSON, with the example campaign's secret.",
          exampleSignature(id, timestamp, body),
        ),
      ];
      return [
        type,
        {
          post: {
            operationId,
            summary,
            description: `${schema.description} Sent as a signed \`POST\` to the campaign's \`webhook_url\`; verify it with any Standard Webhooks library (e.g. the \`standardwebhooks\` npm package) and the campaign's \`webhook_secret\`. ${type === 'webhook.test' ? 'Sent once, on demand, and never retried.' : 'Delivery is at least once, in no particular order.'}`,
            tags: ['Webhooks'],
            security: [],
            parameters,
            requestBody: {
              required: true,
              content: { [JSON_MEDIA]: { schema: registry.use(schema), example: body } },
            },
            responses: {
              '2XX': { description: 'Delivered. Only a 2xx answer counts as delivered.' },
              '410': { description: 'Gone: the event is not sent again.' },
              default: {
                description:
                  'Any other answer, a timeout (15 s) or a connection error is a failure: the event is retried with backoff for about 3 days. Redirects are not followed.',
              },
            },
          },
        },
      ];
    }),
  );
}

/**
 * One entry per code under `# Errors`: Redoc names a `##` heading under a `#` one
 * `section/<parent>/<heading>`, the anchor each error body's `doc_url` points at (`errorAnchor`).
 */
function errorEntries(): string {
  return (Object.keys(errorStatus) as ErrorCode[])
    .map((code) => `## ${code}\nStatus **${errorStatus[code]}**. ${errorMeanings[code].when}`)
    .join('\n\n');
}

const overview = `Campaigns, referral links, referred users and actions, with signed webhooks.

# Authentication
Every \`/api/v1\` request except \`GET /api/v1/openapi.json\` carries the \`api-key\` header. A missing, unknown or revoked key is 401 \`unauthorized\`. A resource of another account answers exactly like one that does not exist (404).

# Conventions
- Requests and responses are JSON. A request with a body must send \`Content-Type: application/json\` (415 otherwise) and at most ${MAX_BODY_BYTES / 1024} KiB (413). Unknown fields are rejected (400 \`validation_failed\`).
- Every \`created_at\` is UTC in the form \`YYYY-MM-DD_HH-MM-SS\`.
- Every response carries \`x-request-id\`, made of \`A-Z a-z 0-9 _ -\` only: quote it when asking for support.
- Lists return a plain JSON array in the order their operation states (links and events oldest first, campaigns and delivery attempts newest first), \`limit\` (1–1000) items at most (${DEFAULT_LIST_LIMIT} by default). While more items remain, the response has a \`Link: <…>; rel="next"\` header and \`x-next-cursor\`; pass that cursor as \`cursor\` to get the next page. A page may hold fewer than \`limit\` items (item sizes vary); follow cursors until there is none to reach every item. A cursor works only on the list it came from: on another list, campaign or account it is 400 \`validation_failed\` (field \`cursor\`).
- The examples tell one story (a campaign, a referrer's link, a visit, a signup, a purchase). Each operation's \`curl\` sample sends its example request to the server this reference is served from (in the JSON document, the local stack on its default port, 3000), with \`API_KEY\` set to your key (the one \`npm start\` printed, locally); replace the example ids with ones of your own.

# Retries
Every \`POST\` may carry an \`Idempotency-Key\` (1–255 printable ASCII characters): a retry with the same key, method, path and body gets the first 2xx answer again, with \`Idempotent-Replayed: true\`, and writes nothing; answers are kept at least 24 hours. A dependency that throttles, fails or does not answer within about 5 seconds gives 503 \`service_unavailable\` with \`Retry-After\`: the write may or may not have happened, so retry with the same key.

# Versioning
Within \`/api/v1\` nothing documented here is removed or changed: paths, methods, fields (their names, types, meanings and whether they can be null), status codes and error codes stay, and no request field becomes required. What may be added without notice: endpoints, optional request fields and query parameters, fields of response objects, error bodies and webhook \`data\`, response headers, error codes under a status an operation already documents, and webhook event types, which are sent only to campaigns that ask for them. So ignore fields and headers you do not know, branch on \`error.code\` (never on \`message\`, whose wording may change) and treat a code you do not know by its status. \`info.version\` gains a minor number with every addition. A deprecated operation is marked so here and answers with a \`Deprecation\` header, and with \`Sunset\` once its end date is set, at least 6 months ahead; removal only comes with \`/api/v2\`, served beside \`/api/v1\` until then.

# Errors
Every 4xx and 5xx body is \`{ "error": { "code", "message", "details"?, "doc_url" } }\`. Branch on \`code\`; \`message\` is for people and may change; \`details\` lists the offending fields of a validation error; \`doc_url\` links the code's entry below: absolute on the host the request reached (\`https://<host>/docs#section/Errors/<code>\`), or relative (\`/docs#section/Errors/<code>\`) where that host is not known.

${errorEntries()}
`;

/** Build the document for a route table (the real one unless a test passes another). */
export function buildOpenApiDocument(
  table: readonly RouteDefinition[] = routeTable,
  definitions: Readonly<Record<string, OperationDefinition>> = operationTable,
): OpenApiDocument {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const shared: SharedComponents = { responses: {}, examples: {} };
  for (const route of table) {
    const meta = definitions[route.name];
    if (!meta) throw new Error(`Route ${route.name} has no operation in lib/operations/definitions.ts`);
    paths[route.path] ??= {};
    const item = paths[route.path] as Record<string, JsonSchema>;
    item[route.method.toLowerCase()] = operation(shared, route, meta);
    if (answersHead(route)) item.head = headOperation(shared, route, meta);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Referral tracking API',
      // A minor number more with every addition (README, "API versioning"): 1.1 added doc_url.
      version: '1.3.0',
      description: overview,
    },
    servers: [{ url: '/', description: 'The deployment serving this document' }],
    security: [{ [SECURITY_SCHEME]: [] }],
    tags: [
      {
        name: tags.campaigns,
        description: 'A campaign owns referral links; its URL is the base of every link.',
      },
      { name: tags.links, description: 'Referral links and their counters.' },
      { name: tags.referredUsers, description: 'Users who signed up through a referral link.' },
      { name: tags.actions, description: 'Anything recorded against a link: visits, purchases, sign-ins…' },
      { name: tags.redirect, description: 'The public short link that visitors follow.' },
      { name: tags.meta, description: 'This document and the reference page.' },
      {
        name: tags.webhooks,
        description:
          "Events sent to the campaign's `webhook_url` (the `webhooks` of this document), and the operations to see, test and replay them: the delivery log, the events feed, redelivery, a test event and secret rotation.",
      },
      { name: tags.health, description: 'Checks for load balancers, uptime monitors and operators.' },
    ],
    paths,
    webhooks: webhooks(),
    components: {
      schemas: registry.components(),
      responses: shared.responses,
      headers: headerComponents,
      parameters: { IdempotencyKey: idempotencyKeyParameter },
      examples: shared.examples,
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: 'api-key',
          description: 'The key issued for your account (`npm run api-key -- create`).',
        },
      },
    },
  };
}

/** The document of this deployment, built once per cold start. */
export const openApiDocument: OpenApiDocument = buildOpenApiDocument();
