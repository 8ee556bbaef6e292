/**
 * Hostile and careless input against the running local stack, one `describe` per rule of the
 * contract. Generated inputs come from fast-check: on a failure it prints the seed and the path
 * of the smallest failing case (`fc.assert(..., { seed, path })` replays it). Whatever is sent,
 * the answer is never a 5xx; an accepted input comes back exactly; a refused one is the contract's
 * error, naming the field.
 *
 * On a stack of its own: its thousands of requests, one after the other, would queue every other
 * file's requests behind them in the shared stack's DynamoDB Local (`own-stack.ts`).
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { nonFiniteNumberPath, stringifyJson } from '../../lib/domain/json.ts';
import { routes } from '../../lib/routes.ts';
import { eventually, mapLimit, waitUntil } from '../../tools/wait.ts';
import { startWebhookReceiver } from '../../tools/webhook-receiver.ts';
import { type ApiResponse, api, rawRequest } from '../support/api.ts';
import { expectError, expectNoLeak, expectValidation } from '../support/assertions.ts';
import { stackOfItsOwn } from '../support/own-stack.ts';
import {
  type ActionBody,
  BROWSER_UA,
  createCampaign,
  createLink,
  createReferredUser,
} from '../support/records.ts';
import { settledClicks } from '../support/settled.ts';

stackOfItsOwn();

/** No 5xx, no stack trace, and a 4xx is the contract's error body. */
function expectHandled(res: ApiResponse, label: string): void {
  expect(res.status, `${label}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
  expectNoLeak(res.text);
  if (res.status >= 400)
    expect(res.body, label).toEqual({ error: expect.objectContaining({ code: expect.any(String) }) });
}

/** One canonical text per JSON value, so "returned exactly" is one string comparison. */
const canonical = (value: unknown) => stringifyJson(value);

// ---------------------------------------------------------------------------------------------
// Generators: JSON text, written token by token, so numbers can be any literal JSON allows
// (1e400, 123456789012345678901234567890, -0) and keys anything (``, `__proto__`, lone surrogates).
// ---------------------------------------------------------------------------------------------

const numberLiteral = fc.oneof(
  fc.constantFrom(
    '0',
    '-0',
    '1e16',
    '1E+16',
    '-1e200',
    '1e200',
    '1e-200',
    '-1e-200',
    '123456789012345678901234567890',
    '9007199254740993',
    '0.1',
    '-3.5e-7',
    '1.7976931348623157e308',
    '5e-324',
  ),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
);
const nonFiniteLiteral = fc.constantFrom('1e400', '-1e400', '1e999999');
const keyText = fc
  .oneof(
    fc.constantFrom(
      '',
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      '0',
      '01',
      'a.b',
      'a\nb',
    ),
    fc.string({ unit: 'binary', maxLength: 12 }),
  )
  .map((key) => JSON.stringify(key));
const stringText = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => JSON.stringify(s));

const { json } = fc.letrec<{ json: string; leaf: string; array: string; object: string }>((tie) => ({
  json: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('array'), tie('object')),
  leaf: fc.oneof(numberLiteral, stringText, fc.constantFrom('true', 'false', 'null')),
  array: fc.array(tie('json'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(keyText, tie('json')), { maxLength: 5 })
    .map((members) => `{${members.map(([k, v]) => `${k}:${v}`).join(',')}}`),
}));

/** A nesting the native serializer may not survive: `depth` levels of arrays or objects. */
const deepJson = fc
  .tuple(fc.integer({ min: 25, max: 4090 }), fc.boolean(), numberLiteral)
  .map(([depth, arrays, inner]) =>
    arrays
      ? `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`
      : `${'{"":'.repeat(depth)}${inner}${'}'.repeat(depth)}`,
  );

/** Metadata as JSON text: mostly small odd objects, sometimes deep, sometimes over 8 KiB or not finite. */
const metadataText = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .array(fc.tuple(keyText, json), { maxLength: 6 })
      .map((m) => `{${m.map(([k, v]) => `${k}:${v}`).join(',')}}`),
  },
  { weight: 2, arbitrary: fc.tuple(keyText, deepJson).map(([k, v]) => `{${k}:${v}}`) },
  {
    weight: 1,
    arbitrary: fc.tuple(keyText, json, nonFiniteLiteral).map(([k, v, n]) => `{${k}:[${v},${n}]}`),
  },
  { weight: 1, arbitrary: fc.integer({ min: 8180, max: 8200 }).map((n) => `{"a":"${'x'.repeat(n - 8)}"}`) },
);

/** What the contract says of a metadata text: kept exactly, or refused by field. */
function expectedMetadata(text: string): { ok: true; value: unknown } | { ok: false } {
  const value = JSON.parse(text);
  if (nonFiniteNumberPath(value) !== undefined) return { ok: false };
  if (Buffer.byteLength(canonical(value), 'utf8') > 8 * 1024) return { ok: false };
  return { ok: true, value };
}

async function postRaw(path: string, bodyText: string): Promise<ApiResponse> {
  return api('POST', path, { rawBody: bodyText, headers: { 'content-type': 'application/json' } });
}

function checkMetadataAnswer(res: ApiResponse, text: string): void {
  expectHandled(res, text.slice(0, 200));
  const expected = expectedMetadata(text);
  if (!expected.ok) {
    expectValidation(res, 'metadata');
    return;
  }
  expect(res.status, res.text.slice(0, 300)).toBe(201);
  // The client reads the answer with JSON.parse: it must give back what JSON.parse read from the request.
  const returned = (JSON.parse(res.text) as ActionBody).metadata;
  expect(canonical(returned)).toBe(canonical(expected.value));
}

describe('metadata: any JSON object within 8 KiB, kept exactly; non-finite numbers refused', () => {
  let campaignId: string;
  let code: string;

  beforeAll(async () => {
    campaignId = (await createCampaign({ name: 'hostile metadata' })).id;
    code = (await createLink(campaignId, { referrer_id: 'hostile-referrer' })).referral_code;
    await createReferredUser(code, 'hostile-user');
  });

  it.each([
    ['integers beyond 2^53', '{"n":123456789012345678901234567890,"m":-9007199254740993}'],
    ['1e16 and friends', '{"a":1e16,"b":-1e200,"c":1e200,"d":1e-200}'],
    ['an empty key, also nested', '{"":1,"x":{"":{"":[]}}}'],
    ['__proto__ and constructor keys', '{"__proto__":{"polluted":true},"constructor":{"prototype":1}}'],
    [
      'nesting of 31, 33 and 4,000 levels',
      `{"a":${'['.repeat(31)}${']'.repeat(31)},"b":${'{"":'.repeat(33)}1${'}'.repeat(33)},"c":${'['.repeat(4000)}${']'.repeat(4000)}}`,
    ],
    ['lone surrogates in keys and values', '{"\\ud800":"\\udc00x"}'],
    ['a number that is not finite', '{"a":[1,{"b":1e400}]}'],
  ])('%s, on both action endpoints', async (_label, text) => {
    checkMetadataAnswer(
      await postRaw(
        '/api/v1/action/referral_link',
        `{"referral_code":"${code}","action_type":"odd","metadata":${text}}`,
      ),
      text,
    );
    checkMetadataAnswer(
      await postRaw(
        '/api/v1/action/referred_user',
        `{"campaign_id":"${campaignId}","referred_user_id":"hostile-user","action_type":"odd","metadata":${text}}`,
      ),
      text,
    );
    expect(Object.getPrototypeOf({}).polluted).toBeUndefined();
  });

  // 150 objects per endpoint, sent 10 at a time: each run is a batch of 10 requests in flight.
  // Both endpoints take metadata through the same parser and rule, so together they send 300
  // per run; the named cases above cover the known edges, test/unit/validators.test.ts the
  // validators against their schemas (1,500 cases each, the 8 KiB bound among them), and each
  // run's seed differs, so runs over time cover more
  // (1,000 per endpoint took 75 s of a busy run's critical path; see docs/testing.md for the CPU).
  const batches = fc.array(metadataText, { minLength: 10, maxLength: 10 });

  it('150 random JSON objects on POST /api/v1/action/referral_link', async () => {
    await fc.assert(
      fc.asyncProperty(batches, async (texts) => {
        await Promise.all(
          texts.map(async (text) => {
            const body = `{"referral_code":"${code}","action_type":"fuzz","metadata":${text}}`;
            checkMetadataAnswer(await postRaw('/api/v1/action/referral_link', body), text);
          }),
        );
      }),
      { numRuns: 15 },
    );
  }, 120_000);

  it('150 random JSON objects on POST /api/v1/action/referred_user', async () => {
    await fc.assert(
      fc.asyncProperty(batches, async (texts) => {
        await Promise.all(
          texts.map(async (text) => {
            const body = `{"campaign_id":"${campaignId}","referred_user_id":"hostile-user","action_type":"fuzz","metadata":${text}}`;
            checkMetadataAnswer(await postRaw('/api/v1/action/referred_user', body), text);
          }),
        );
      }),
      { numRuns: 15 },
    );
  }, 120_000);

  it('the webhook carries the metadata exactly as the API answered it', async () => {
    const rx = await startWebhookReceiver();
    try {
      const campaign = await createCampaign({ name: 'hostile metadata webhooks' });
      await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { webhook_url: rx.url } });
      const linkCode = (await createLink(campaign.id)).referral_code;
      await createReferredUser(linkCode, 'hook-user');
      const texts = fc
        .sample(metadataText, { numRuns: 40, seed: 11 })
        .filter((t) => expectedMetadata(t).ok)
        .concat([
          '{"__proto__":{"":[1e-200]},"n":123456789012345678901234567890}',
          `{"d":${'['.repeat(3000)}${']'.repeat(3000)}}`,
        ]);
      const answered = new Map<number, string>();
      await mapLimit(texts, 4, async (text, i) => {
        const res =
          i % 2 === 0
            ? await postRaw(
                '/api/v1/action/referral_link',
                `{"referral_code":"${linkCode}","action_type":"hook","metadata":${text}}`,
              )
            : await postRaw(
                '/api/v1/action/referred_user',
                `{"campaign_id":"${campaign.id}","referred_user_id":"hook-user","action_type":"hook","metadata":${text}}`,
              );
        expect(res.status, res.text.slice(0, 200)).toBe(201);
        const action = JSON.parse(res.text) as ActionBody;
        answered.set(action.id, canonical(action.metadata));
      });
      // Delivery is at-least-once (a copy comes again when an attempt's answer is late), so every
      // copy of every action's event must carry its answer, and each action's event must come.
      const actionEvents = () =>
        rx.requests
          .map((r) => JSON.parse(r.body) as { type: string; data: ActionBody })
          .filter((body) => body.type === 'action.created');
      const delivered = () => new Set(actionEvents().map((body) => body.data.id));
      await waitUntil(() => [...answered.keys()].every((id) => delivered().has(id)), 30_000);
      for (const body of actionEvents()) {
        expect(canonical(body.data.metadata)).toBe(answered.get(body.data.id));
      }
      expect([...answered.keys()].filter((id) => !delivered().has(id))).toEqual([]);
    } finally {
      await rx.close();
    }
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------

/** The contract's rule for names and ids, written independently of the service's code. */
function textRule(value: string, rule: { max: number; trimmed: boolean }): 'ok' | 'refused' {
  if (!value.isWellFormed()) return 'refused';
  const text = rule.trimmed ? value.trim() : value;
  const length = [...text].length;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the contract's control characters
  if (length < 1 || length > rule.max || /[\u0000-\u001f\u007f-\u009f]/.test(text)) return 'refused';
  return 'ok';
}

/** A path segment that URL parsers remove (WHATWG URL: `.`, `..`, and their `%2E` spellings). */
const isDotSegment = (s: string) => /^(\.|%2e){1,2}$/i.test(s);

const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: 'grapheme', minLength: 250, maxLength: 260 }),
  fc.integer({ min: 250, max: 260 }).map((n) => '😀'.repeat(n)),
  fc.constantFrom('a\u0085b', '\u009f', ' \t x \n', '\u00a0', 'x\ud800', '\u2028'),
);

// 150 texts per field, each through the wire and back against the contract's rule written here;
// the service's validators meet their schemas in 1,500 cases each in test/unit/validators.test.ts.
describe('names and ids: 1–256 code points, no control characters, stored exactly', () => {
  it('campaign names (trimmed): accepted and returned trimmed, or refused naming `name`', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (name) => {
        const res = await api('POST', '/api/v1/campaign', { body: { url: 'example.com', name } });
        expectHandled(res, JSON.stringify(name));
        if (textRule(name, { max: 256, trimmed: true }) === 'refused') {
          expectValidation(res, 'name');
          return;
        }
        expect(res.status, res.text).toBe(201);
        expect(res.body.name).toBe(name.trim());
        expect((await api('GET', `/api/v1/campaign?id=${res.body.id}`)).body.name).toBe(name.trim());
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it('referrer ids: accepted and found again by their list, or refused naming `referrer_id`', async () => {
    const campaignId = (await createCampaign({ name: 'hostile ids' })).id;
    await fc.assert(
      fc.asyncProperty(anyText, async (referrer) => {
        const res = await api('POST', '/api/v1/referral_link', {
          body: { campaign_id: campaignId, referrer_id: referrer },
        });
        expectHandled(res, JSON.stringify(referrer));
        if (referrer === '') {
          expect(res.body.referrer_id).toBeNull();
          return;
        }
        if (textRule(referrer, { max: 256, trimmed: false }) === 'refused') {
          expectValidation(res, 'referrer_id');
          return;
        }
        expect(res.status, res.text).toBe(201);
        expect(res.body.referrer_id).toBe(referrer);
        // A referrer id `.` or `..` is stored, but no URL client can send it as a path segment.
        if (isDotSegment(referrer)) return;
        const list = await api('GET', `/api/v1/referral_link/${campaignId}/${encodeURIComponent(referrer)}`);
        expect(list.status, list.text).toBe(200);
        expect((list.body as Array<{ id: number }>).map((l) => l.id)).toContain(res.body.id);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------

describe('bodies: application/json in UTF-8 only', () => {
  const key = { 'api-key': 'test-key-tenant-a-0000000000000001' };

  it.each([
    'application/vnd.x+json',
    'application/merge-patch+json',
    'application/json; charset=iso-8859-1',
    'application/json; charset=utf-16',
    'text/plain; charset=utf-8',
  ])('415 for %j', async (contentType) => {
    const res = await rawRequest('POST', '/api/v1/campaign', {
      headers: { ...key, 'content-type': contentType },
      body: '{"url":"example.com","name":"ct"}',
    });
    expectError(res, 415, 'unsupported_media_type');
  });

  it.each([
    ['a lone continuation byte', [0x80]],
    ['an overlong slash', [0xc0, 0xaf]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['Latin-1 é', [0xe9]],
  ])('400 invalid_json for bytes that are not UTF-8 (%s), and nothing stored', async (_label, bytes) => {
    const body = Buffer.concat([
      Buffer.from('{"url":"example.com","name":"bad '),
      Buffer.from(bytes),
      Buffer.from('"}'),
    ]);
    const res = await rawRequest('POST', '/api/v1/campaign', {
      headers: { ...key, 'content-type': 'application/json; charset=utf-8' },
      body,
    });
    expectError(res, 400, 'invalid_json');
  });

  it('a valid UTF-8 body of any script is taken as sent', async () => {
    const res = await rawRequest('POST', '/api/v1/campaign', {
      headers: { ...key, 'content-type': 'application/json; charset=UTF-8' },
      body: Buffer.from('{"url":"example.com","name":"日本 é 😀"}', 'utf8'),
    });
    expect(res.status).toBe(201);
    expect((res.body as { name: string }).name).toBe('日本 é 😀');
  });
});

describe('HEAD on every GET route: the GET status and headers, no body', () => {
  // Concurrent: each route's case waits about a second for the stream on its own campaign.
  it.concurrent.for(routes.filter((r) => r.method === 'GET').map((r) => [r.path, r] as const))(
    '%s',
    async ([_path, route], { expect }) => {
      const campaignId = (await createCampaign({ name: 'head' })).id;
      const link = await createLink(campaignId, { referrer_id: 'head-ref' });
      await createReferredUser(link.referral_code, 'head-user');
      // The signup's feed event and rollups are written from the table stream: wait for them, so
      // that the GET and the HEAD below read the same state (a feed of `[]`, then of one event,
      // failed this once).
      await eventually('the signup in the feed and in the analytics', async () => {
        const feed = await api('GET', `/api/v1/events/${campaignId}`);
        const stats = await api('GET', `/api/v1/analytics/${campaignId}`);
        // The rankings are summed in a window of their own, after the series: a top list of `[]`
        // for the GET, then of one referrer for the HEAD, failed this once.
        const top = await api('GET', `/api/v1/analytics/${campaignId}/top`);
        return feed.body.length === 1 && stats.body.totals.referred_users === 1 && top.body.length === 1
          ? true
          : undefined;
      });
      const queries: Record<string, string> = {
        '/api/v1/campaign': `?id=${campaignId}`,
        '/api/v1/referral_link': `?id=${link.id}`,
        '/api/v1/referred_user': `?campaign_id=${campaignId}&referred_user_id=head-user`,
      };
      if (route.path === '/api/v1/conversion') {
        const sale = { campaign_id: campaignId, referred_user_id: 'head-user', amount: 100 };
        const made = await api('POST', '/api/v1/conversion', { body: sale });
        expect(made.status, JSON.stringify(made.body)).toBe(201);
        queries[route.path] = `?id=${made.body.id}`;
      }
      const path = route.path
        .replace('{campaign_id}', campaignId)
        .replace('{referrer_id}', 'head-ref')
        .replace('{recipient_id}', 'head-ref')
        .replace('{referral_code}', link.referral_code);
      const query = queries[path] ?? '';
      const get = await rawRequest('GET', `${path}${query}`, {
        headers: { 'api-key': 'test-key-tenant-a-0000000000000001' },
      });
      const head = await rawRequest('HEAD', `${path}${query}`, {
        headers: { 'api-key': 'test-key-tenant-a-0000000000000001' },
      });
      expect(head.status).toBe(get.status);
      expect(head.status).toBeLessThan(400);
      expect(head.text).toBe('');
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(head.headers.get('location')).toBe(get.headers.get('location'));
      if (BODY_VARIES.has(route.name)) {
        // The GET's own body would differ between two calls: only a length is expected.
        expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
      } else {
        expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
      }
    },
  );
});

/**
 * GET routes whose body changes from one call to the next on its own: the readiness check's
 * measured latency, and the account's campaign list (other test files add campaigns meanwhile).
 */
const BODY_VARIES = new Set(['Readiness', 'ListCampaigns']);

// ---------------------------------------------------------------------------------------------

describe('the redirect: an ASCII Location, and a visit counted only with its 302', () => {
  it.each([
    ['https://example.com/日本', 'https://example.com/%E6%97%A5%E6%9C%AC?rfa='],
    ['https://bücher.example/', 'https://xn--bcher-kva.example/?rfa='],
    ['https://example.com/café?q=ÿ', 'https://example.com/caf%C3%A9?q=%C3%BF&rfa='],
    ['example.com/😀#frag', 'https://example.com/%F0%9F%98%80?rfa='],
  ])('%s', async (url, prefix) => {
    const campaign = await createCampaign({ url });
    const link = await createLink(campaign.id);
    const res = await rawRequest('GET', `/r/${link.referral_code}`, {
      headers: { 'user-agent': BROWSER_UA },
    });
    expect(res.status, res.text).toBe(302);
    const location = res.headers.get('location') ?? '';
    expect(location.startsWith(`${prefix}${link.referral_code}`)).toBe(true);
    expect(location).toMatch(/^[\x21-\x7e]+$/);
    expect(await settledClicks(link.referral_code, 1)).toBe(1);
  });

  it('any campaign URL the API accepts: 302 with an ASCII Location, each visit counted once', async () => {
    const visited: string[] = [];
    const segment = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 });
    const host = fc.constantFrom(
      'example.com',
      'bücher.example',
      '日本.example',
      'xn--bcher-kva.example:8443',
    );
    await fc.assert(
      fc.asyncProperty(host, segment, async (h, s) => {
        const created = await api('POST', '/api/v1/campaign', {
          body: { url: `https://${h}/${s}`, name: 'fuzz redirect' },
        });
        expectHandled(created, `${h}/${s}`);
        if (created.status !== 201) return;
        const link = await createLink(created.body.id);
        const res = await rawRequest('GET', `/r/${link.referral_code}`, {
          headers: { 'user-agent': BROWSER_UA },
        });
        expect(res.status, `${h}/${s}: ${res.text}`).toBe(302);
        const location = res.headers.get('location') ?? '';
        expect(location).toMatch(/^\p{ASCII}+$/u);
        expect(new URL(location).href).toBe(new URL(link.referral_link ?? '').href);
        visited.push(link.referral_code);
      }),
      { numRuns: 60 },
    );
    // The visits reach total_clicks through the stream: all settle together, each exactly once.
    const clicks = await mapLimit(visited, 8, (code) => settledClicks(code, 1));
    expect(clicks).toEqual(visited.map(() => 1));
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// Webhook operations: the inputs of endpoints 18–22 and the campaign's new fields
// ---------------------------------------------------------------------------------------------

describe('webhook_events: a non-empty array of distinct known types, or 400 on webhook_events', () => {
  const KNOWN = [
    'action.created',
    'referred_user.created',
    'conversion.created',
    'conversion.refunded',
    'reward.created',
    'reward.approved',
    'reward.voided',
    'reward.paid',
    'reward.flagged',
  ];
  const type = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...KNOWN) },
    { weight: 1, arbitrary: fc.constantFrom('webhook.test', 'ACTION.CREATED', 'action.created ', '', '*') },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  );
  const value = fc.oneof(
    { weight: 5, arbitrary: fc.array(type, { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'action.created', 1, {}, [1], [null], true) },
  );

  it('accepts exactly the valid lists, returned in the API order', async () => {
    const campaign = await createCampaign({ name: 'events property' });
    await fc.assert(
      fc.asyncProperty(value, async (events) => {
        const res = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
          body: { webhook_events: events },
        });
        expectHandled(res, JSON.stringify(events));
        const valid =
          Array.isArray(events) &&
          events.length > 0 &&
          events.every((t) => KNOWN.includes(t as string)) &&
          new Set(events).size === events.length;
        if (valid) {
          expect(res.status).toBe(200);
          expect(res.body.webhook_events).toEqual(KNOWN.filter((t) => (events as string[]).includes(t)));
        } else {
          expect(res.status, JSON.stringify(events)).toBe(400);
          expect(res.body.error.details[0].field).toMatch(/^webhook_events(\.\d+)?$/);
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('reward_rules and review_signups_per_hour: kept completed, or 400 naming the field', () => {
  const id = fc.oneof(
    fc.constantFrom(undefined, 'share', 'a', 'x'.repeat(64), 'x'.repeat(65), '', 'has space', 'é', 'share'),
    fc.string({ maxLength: 8 }),
  );
  const int = (min: number, max: number) =>
    fc.oneof(fc.integer({ min, max }), fc.constantFrom<unknown>(min - 1, max + 1, 1.5, '1', null, -0, 1e300));
  const rule = fc.record(
    {
      id,
      on: fc.constantFrom<unknown>('referred_user', 'conversion', 'visit', 1),
      recipient: fc.constantFrom<unknown>('referrer', 'referred_user', 'both'),
      type: fc.constantFrom<unknown>('flat', 'percent', 'PERCENT'),
      amount: fc.oneof(int(1, 10_000), int(1, 1_000_000_000_000)),
      first_conversions: fc.oneof(fc.constant(undefined), int(1, 1_000_000)),
      hold_days: fc.oneof(fc.constant(undefined), int(0, 365)),
    },
    { requiredKeys: [] },
  );
  const rules = fc.oneof(
    { weight: 8, arbitrary: fc.array(rule, { maxLength: 12 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, {}, 'rules', [null], [[]], 3) },
  );
  const isInt = (v: unknown, min: number, max: number) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
  /** The contract's rules, written out independently of lib/domain/reward-rules.ts. */
  function expected(value: unknown): Array<Record<string, unknown>> | undefined {
    if (!Array.isArray(value) || value.length > 10) return undefined;
    const out = value.map((r: Record<string, unknown> | null, i) => {
      if (typeof r !== 'object' || r === null || Array.isArray(r)) return undefined;
      const ruleId = r.id === undefined ? `rule_${i + 1}` : r.id;
      const ok =
        typeof ruleId === 'string' &&
        /^[A-Za-z0-9_-]{1,64}$/.test(ruleId) &&
        (r.on === 'referred_user' || r.on === 'conversion') &&
        (r.recipient === 'referrer' || r.recipient === 'referred_user') &&
        ((r.type === 'flat' && isInt(r.amount, 1, 1e12)) ||
          (r.type === 'percent' && r.on === 'conversion' && isInt(r.amount, 1, 10_000))) &&
        (r.first_conversions === undefined ||
          (r.on === 'conversion' && isInt(r.first_conversions, 1, 1_000_000))) &&
        (r.hold_days === undefined || isInt(r.hold_days, 0, 365));
      if (!ok) return undefined;
      return {
        id: ruleId,
        on: r.on,
        recipient: r.recipient,
        type: r.type,
        amount: r.amount,
        ...(r.first_conversions === undefined ? {} : { first_conversions: r.first_conversions }),
        hold_days: r.hold_days ?? 30,
      };
    });
    if (out.some((r) => r === undefined)) return undefined;
    const ids = out.map((r) => r!.id);
    return new Set(ids).size === ids.length ? (out as Array<Record<string, unknown>>) : undefined;
  }

  it('any reward_rules on PATCH: 200 with the rules completed, or 400 on reward_rules', async () => {
    const campaign = await createCampaign({ name: 'rules property' });
    await fc.assert(
      fc.asyncProperty(rules, async (value) => {
        const res = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
          body: { reward_rules: value },
        });
        const label = JSON.stringify(value);
        expectHandled(res, label);
        const want = expected(JSON.parse(JSON.stringify(value ?? null)));
        if (want) {
          expect(res.status, label).toBe(200);
          expect(res.body.reward_rules, label).toEqual(want);
        } else {
          expect(res.status, label).toBe(400);
          expect(res.body.error.code).toBe('validation_failed');
          expect(res.body.error.details[0].field, label).toMatch(/^reward_rules/);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('review_signups_per_hour: an integer 1-100,000, or 400 on it', async () => {
    const campaign = await createCampaign({ name: 'review property' });
    await fc.assert(
      fc.asyncProperty(int(1, 100_000), async (value) => {
        const res = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
          body: { review_signups_per_hour: value },
        });
        expectHandled(res, String(value));
        if (isInt(value, 1, 100_000)) expect(res.body.review_signups_per_hour).toBe(value);
        else expect(res.body.error.details[0].field).toBe('review_signups_per_hour');
      }),
      { numRuns: 60 },
    );
  });
});

describe('webhook list inputs: status filter, cursors, event ids', () => {
  let campaignId: string;
  beforeAll(async () => {
    campaignId = (await createCampaign({ name: 'webhook list inputs' })).id;
  });

  it('status is one of succeeded, failed, pending, or 400 on status', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom('succeeded', 'failed', 'pending', 'FAILED', 'all', ''),
          fc.string({ maxLength: 12 }),
        ),
        async (status) => {
          const res = await api(
            'GET',
            `/api/v1/webhook_deliveries/${campaignId}?status=${encodeURIComponent(status)}`,
          );
          expectHandled(res, status);
          if (['succeeded', 'failed', 'pending'].includes(status)) expect(res.status).toBe(200);
          else expectValidation(res, 'status');
        },
      ),
      { numRuns: 100 },
    );
  });

  it('any cursor on the feed or the log is a 200 or 400 on cursor, never more', async () => {
    const cursor = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ maxLength: 60 }).map((s) => Buffer.from(s).toString('base64url')),
      fc
        .tuple(fc.constantFrom(2, 3), fc.string({ maxLength: 20 }), fc.string({ maxLength: 14 }))
        .map((parts) => Buffer.from(JSON.stringify(parts)).toString('base64url')),
    );
    await fc.assert(
      fc.asyncProperty(cursor, fc.constantFrom('events', 'webhook_deliveries'), async (c, list) => {
        const res = await api('GET', `/api/v1/${list}/${campaignId}?cursor=${encodeURIComponent(c)}`);
        expectHandled(res, `${list} ${JSON.stringify(c)}`);
        if (res.status !== 200) expectValidation(res, 'cursor');
      }),
      { numRuns: 150 },
    );
  });

  it('any event id to redeliver is a 202 (an event of this tenant), a 404 event_not_found or a 400 on event_id', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          // `.` and `..` (also as `%2E`) are dot segments: every URL client removes them before
          // sending, so `/events/./redeliver` reaches the service as `/events/redeliver`.
          fc.string({ maxLength: 40 }).filter((s) => !isDotSegment(s)),
          fc.integer({ min: 1, max: 2 ** 53 }).map((n) => `evt_action_${n}`),
          fc.tuple(fc.integer({ min: 1, max: 2 ** 53 }), fc.uuid()).map(([n, c]) => `evt_action_${n}_${c}`),
          fc.integer({ min: 1 }).map((n) => `evt_referred_user_${n}`),
        ),
        async (id) => {
          const res = await api('POST', `/api/v1/events/${encodeURIComponent(id)}/redeliver`);
          expectHandled(res, id);
          expect([202, 400, 404]).toContain(res.status);
          if (res.status === 404 && res.body.error.code !== 'route_not_found') {
            expectError(res, 404, 'event_not_found');
          }
          if (res.status === 400) expectValidation(res, 'event_id');
        },
      ),
      { numRuns: 100 },
    );
  });
});
