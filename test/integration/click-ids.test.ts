/**
 * Click ids (contract, "Attribution and conversions"): the campaign's `click_ids` and
 * `attribution_window_days`, `rfclid` on the redirect of a counted visit, and a signup by
 * `click_id` (endpoint 10) that records `click_id` and `clicked_at`, with `404 click_not_found`
 * and `422 click_expired`. Against the run's stack (DynamoDB Local), through the API; the one
 * write behind its back ages a click, which the API cannot make a day old in a test's time.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { newCampaignItem } from '../../lib/db/entities/campaign.ts';
import { visitKey } from '../../lib/db/entities/visit.ts';
import { decodeClickId, encodeClickId } from '../../lib/domain/click-ids.ts';
import { ReferredUser } from '../../lib/domain/link-schemas.ts';
import { Campaign as CampaignSchema } from '../../lib/domain/schemas.ts';
import { eventually } from '../../tools/wait.ts';
import { type ApiResponse, api, TENANT_A, TENANT_B } from '../support/api.ts';
import { expectError, expectShape, expectValidation } from '../support/assertions.ts';
import { BROWSER_UA, createCampaign, createLink, type LinkBody } from '../support/records.ts';
import { putItems, table } from '../support/table.ts';

type ClickUser = ReferredUser;

const CRAWLER_UA = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';

/** A visit through `/r/{code}` as a browser (or `userAgent`), without following the redirect. */
const visit = (code: string, method = 'GET', userAgent = BROWSER_UA) =>
  api(method, `/r/${code}`, { key: null, headers: { 'user-agent': userAgent } });

/** The click id of a visit's `Location`, if any. */
const clickIdOf = (res: ApiResponse) => new URL(res.headers.get('location') ?? '').searchParams.get('rfclid');

/** A counted visit's click id (the campaign has `click_ids` on). */
async function click(code: string): Promise<string> {
  const res = await visit(code);
  expect(res.status, res.text).toBe(302);
  const id = clickIdOf(res);
  if (!id) throw new Error(`no rfclid in ${res.headers.get('location')}`);
  return id;
}

const signUp = (body: Record<string, unknown>, key?: string) =>
  api<ClickUser>('POST', '/api/v1/referred_user', { body, key });

const uid = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

/** Contract timestamp to epoch ms. */
const msOf = (ts: string) => Date.parse(`${ts.slice(0, 10)}T${ts.slice(11).replace(/-/g, ':')}Z`);

let campaignId: string;
let link: LinkBody;

beforeAll(async () => {
  campaignId = (
    await createCampaign({ url: 'https://shop.example.com/welcome', name: 'clicks', click_ids: true })
  ).id;
  link = await createLink(campaignId, { referrer_id: 'alice' });
});

describe('campaign click settings', () => {
  it('default to off and 90 days, are set on create and PATCH, and show on GET and in the list', async () => {
    const plain = await createCampaign({ name: 'no clicks' });
    expect(plain).toMatchObject({ click_ids: false, attribution_window_days: 90 });
    const made = await createCampaign({ name: 'clicks', click_ids: true, attribution_window_days: 7 });
    expect(made).toMatchObject({ click_ids: true, attribution_window_days: 7 });
    const patched = await api('PATCH', `/api/v1/campaign?id=${plain.id}`, {
      body: { click_ids: true, attribution_window_days: 365 },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ click_ids: true, attribution_window_days: 365, name: 'no clicks' });
    const got = await api('GET', `/api/v1/campaign?id=${plain.id}`);
    expect(got.body).toMatchObject({ click_ids: true, attribution_window_days: 365 });
    const renamed = await api('PATCH', `/api/v1/campaign?id=${plain.id}`, { body: { name: 'renamed' } });
    expect(renamed.body).toMatchObject({ click_ids: true, attribution_window_days: 365 });
    const list = await api('GET', '/api/v1/campaigns?limit=1000');
    expect(list.body.find((c: { id: string }) => c.id === made.id)).toMatchObject({
      click_ids: true,
      attribution_window_days: 7,
    });
  });

  it.each([
    ['attribution_window_days', 0],
    ['attribution_window_days', 366],
    ['attribution_window_days', 1.5],
    ['attribution_window_days', '30'],
    ['attribution_window_days', null],
    ['click_ids', 'true'],
    ['click_ids', 1],
    ['click_ids', null],
  ])('%s = %j is 400 on create and PATCH', async (field, value) => {
    const created = await api('POST', '/api/v1/campaign', {
      body: { url: 'example.com', name: 'bad', [field]: value },
    });
    expectValidation(created, field);
    const patched = await api('PATCH', `/api/v1/campaign?id=${campaignId}`, { body: { [field]: value } });
    expectValidation(patched, field);
  });

  it('a campaign item written before click ids reads as off and 90 days', async () => {
    const id = randomUUID();
    const now = new Date();
    const {
      click_ids: _,
      attribution_window_days: __,
      ...older
    } = newCampaignItem(
      TENANT_A.tenant,
      {
        id,
        created_at: '2026-01-01_00-00-00',
        url: 'https://example.com',
        name: 'older',
        webhook_url: null,
        webhook_secret: null,
        webhook_events: [],
        webhook_status: 'enabled',
        webhook_disabled_reason: null,
      },
      now,
    );
    await putItems([older]);
    const got = await api('GET', `/api/v1/campaign?id=${id}`);
    expect(got.status, got.text).toBe(200);
    expectShape(CampaignSchema, got.body);
    expect(got.body).toMatchObject({ click_ids: false, attribution_window_days: 90 });
  });
});

describe('the redirect with click ids', () => {
  it('a counted visit: rfclid right after rfa, an opaque URL-safe id naming the link', async () => {
    const res = await visit(link.referral_code);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    const id = clickIdOf(res)!;
    expect(location).toBe(`${link.referral_link}&rfclid=${id}`);
    expect(id).toMatch(/^[A-Za-z0-9_-]{54,}$/);
    expect(decodeClickId(id)).toMatchObject({ campaignId, code: link.referral_code });
    // Every visit its own click.
    expect(await click(link.referral_code)).not.toBe(id);
  });

  it('bots and HEAD are redirected without one', async () => {
    for (const res of [
      await visit(link.referral_code, 'HEAD'),
      await visit(link.referral_code, 'GET', CRAWLER_UA),
    ]) {
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(link.referral_link);
    }
  });

  it('off: no rfclid; turned on by PATCH, the next visit has one', async () => {
    const off = await createCampaign({ url: 'https://example.com/off', name: 'off' });
    const offLink = await createLink(off.id);
    const before = await visit(offLink.referral_code);
    expect(before.headers.get('location')).toBe(offLink.referral_link);
    await api('PATCH', `/api/v1/campaign?id=${off.id}`, { body: { click_ids: true } });
    const after = await visit(offLink.referral_code);
    expect(after.headers.get('location')).toBe(`${offLink.referral_link}&rfclid=${clickIdOf(after)}`);
  });

  it('the Location stays ASCII: rfa then rfclid, before the fragment', async () => {
    const odd = await createCampaign({
      url: 'https://bücher.example/straße?q=ü#café',
      name: 'non-ASCII',
      click_ids: true,
    });
    const oddLink = await createLink(odd.id);
    const res = await visit(oddLink.referral_code);
    const id = clickIdOf(res);
    expect(res.headers.get('location')).toBe(
      `https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC&rfa=${oddLink.referral_code}&rfclid=${id}#caf%C3%A9`,
    );
  });
});

describe('a signup by click id (endpoint 10)', () => {
  it("is created on the click's link with click_id and clicked_at, everywhere a referred user shows", async () => {
    const visitedAt = Date.now();
    const id = await click(link.referral_code);
    const userId = uid('by-click');
    const res = await signUp({ click_id: id, referred_user_id: userId });
    expect(res.status, res.text).toBe(201);
    expectShape(ReferredUser, res.body);
    expect(res.body).toMatchObject({ referred_user_id: userId, click_id: id });
    expect(res.body.referral_link).toMatchObject({ id: link.id, referral_code: link.referral_code });
    expect(Math.abs(msOf(res.body.clicked_at!) - visitedAt)).toBeLessThan(5_000);
    const got = await api(
      'GET',
      `/api/v1/referred_user?campaign_id=${campaignId}&referred_user_id=${userId}`,
    );
    expect(got.body).toMatchObject({ click_id: id, clicked_at: res.body.clicked_at });
    // An action of that user carries the whole referred user, its click included.
    const action = await api('POST', '/api/v1/action/referred_user', {
      body: { campaign_id: campaignId, referred_user_id: userId, action_type: 'purchase' },
    });
    expect(action.status, action.text).toBe(201);
    expect(action.body.referred_user).toMatchObject({ click_id: id, clicked_at: res.body.clicked_at });
    // The feed holds exactly the webhook bodies: `referred_user.created` carries the click.
    const event = await eventually('the signup in the feed', async () => {
      const feed = await api('GET', `/api/v1/events/${campaignId}?limit=1000`);
      return feed.body.find(
        (e: { type: string; data: ClickUser }) =>
          e.type === 'referred_user.created' && e.data.referred_user_id === userId,
      );
    });
    expect(event.data).toMatchObject({ click_id: id, clicked_at: res.body.clicked_at });
  });

  it('by code or link id the click fields are null', async () => {
    const res = await signUp({ referral_code: link.referral_code, referred_user_id: uid('by-code') });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ click_id: null, clicked_at: null });
  });

  it('one click may attribute two signups; one user id still only once', async () => {
    const id = await click(link.referral_code);
    const first = uid('first');
    expect((await signUp({ click_id: id, referred_user_id: first })).status).toBe(201);
    expect((await signUp({ click_id: id, referred_user_id: uid('second') })).status).toBe(201);
    expectError(await signUp({ click_id: id, referred_user_id: first }), 409, 'referred_user_exists');
  });

  it("the link's referrer through its own click: 422 self_referral", async () => {
    expectError(
      await signUp({ click_id: await click(link.referral_code), referred_user_id: 'alice' }),
      422,
      'self_referral',
    );
  });

  it('exactly one of referral_code, referral_link_id and click_id; click_id 1–256 characters', async () => {
    const id = await click(link.referral_code);
    for (const body of [
      { click_id: id, referral_code: link.referral_code, referred_user_id: 'x' },
      { click_id: id, referral_link_id: link.id, referred_user_id: 'x' },
    ]) {
      expectValidation(await signUp(body), 'referral_code');
    }
    expectValidation(await signUp({ click_id: '', referred_user_id: 'x' }), 'click_id');
    expectValidation(await signUp({ click_id: 'A'.repeat(257), referred_user_id: 'x' }), 'click_id');
    expectValidation(await signUp({ click_id: 42, referred_user_id: 'x' }), 'click_id');
  });

  it("another tenant's click is 404 click_not_found, and nothing is written", async () => {
    const id = await click(link.referral_code);
    const userId = uid('tenant-b');
    expectError(
      await signUp({ click_id: id, referred_user_id: userId }, TENANT_B.key),
      404,
      'click_not_found',
    );
    // Tenant B's own campaign of the same id does not exist either way; A's user was not made.
    const got = await api(
      'GET',
      `/api/v1/referred_user?campaign_id=${campaignId}&referred_user_id=${userId}`,
    );
    expectError(got, 404, 'referred_user_not_found');
  });

  it('forged, truncated, altered or unknown ids are 404 click_not_found', async () => {
    const id = await click(link.referral_code);
    const named = decodeClickId(id)!;
    const forged = [
      id.slice(0, -1),
      id.slice(0, -4),
      id.slice(0, 40),
      `${id}A`,
      encodeClickId({ ...named, secret: Buffer.alloc(16, 7).toString('base64url') }),
      encodeClickId({ ...named, visitId: named.visitId + 1 }),
      encodeClickId({ ...named, campaignId: randomUUID() }),
      encodeClickId({ ...named, code: 'NOSUCHCODE' }),
      `${id}=`,
      // Base64 with + and / for - and _ (the same as the id itself when it holds neither).
      Buffer.from(id, 'base64url').toString('base64'),
      'not-a-click-id',
    ].filter((other) => other !== id);
    for (const forgedId of forged) {
      expectError(
        await signUp({ click_id: forgedId, referred_user_id: uid('forged') }),
        404,
        'click_not_found',
      );
    }
  });

  it("a deleted campaign's click is 404 click_not_found", async () => {
    const doomed = await createCampaign({ name: 'doomed', click_ids: true });
    const doomedLink = await createLink(doomed.id);
    const id = await click(doomedLink.referral_code);
    expect((await api('DELETE', `/api/v1/campaign?id=${doomed.id}`)).status).toBe(204);
    expectError(await signUp({ click_id: id, referred_user_id: uid('late') }), 404, 'click_not_found');
  });

  it('a click older than the window at signup is 422 click_expired; a longer window lets it in', async () => {
    const short = await createCampaign({ name: 'one day', click_ids: true, attribution_window_days: 1 });
    const shortLink = await createLink(short.id);
    const id = await click(shortLink.referral_code);
    // Aged behind the API's back: the visit (the click's item) happened two days ago.
    const named = decodeClickId(id)!;
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
    const { db, name } = table();
    await db.send(
      new UpdateCommand({
        TableName: name,
        Key: visitKey(TENANT_A.tenant, named.campaignId, named.visitId),
        UpdateExpression: 'SET event_time = :at',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':at': twoDaysAgo.toISOString() },
      }),
    );
    const userId = uid('late');
    const expired = await signUp({ click_id: id, referred_user_id: userId });
    expectError(expired, 422, 'click_expired');
    const got = await api('GET', `/api/v1/referred_user?campaign_id=${short.id}&referred_user_id=${userId}`);
    expectError(got, 404, 'referred_user_not_found');
    // The window in force at signup time counts.
    await api('PATCH', `/api/v1/campaign?id=${short.id}`, { body: { attribution_window_days: 3 } });
    const res = await signUp({ click_id: id, referred_user_id: userId });
    expect(res.status, res.text).toBe(201);
    expect(msOf(res.body.clicked_at!)).toBe(Math.floor(twoDaysAgo.getTime() / 1000) * 1000);
  });

  it("the click's item expires a day after the longest window (DynamoDB's TTL), never before it", async () => {
    const longest = await createCampaign({ name: 'a year', click_ids: true, attribution_window_days: 365 });
    const yearLink = await createLink(longest.id);
    const id = await click(yearLink.referral_code);
    const named = decodeClickId(id)!;
    const { db, name } = table();
    const { Item } = await db.send(
      new GetCommand({ TableName: name, Key: visitKey(TENANT_A.tenant, named.campaignId, named.visitId) }),
    );
    const clickedSeconds = Date.parse(String(Item?.event_time)) / 1000;
    expect(Item?.expires_at).toBe(Math.floor(clickedSeconds) + 366 * 24 * 60 * 60);
    expect(Item?.expires_at).toBeGreaterThan(clickedSeconds + 365 * 24 * 60 * 60);
  });

  it('any click_id string: never a 5xx, always 400 (not a 1–256 string) or 404 click_not_found', async () => {
    const id = await click(link.referral_code);
    const near = fc
      .tuple(fc.nat(), fc.string({ minLength: 0, maxLength: 3 }))
      .map(([at, s]) => `${id.slice(0, at % id.length)}${s}${id.slice((at % id.length) + 1)}`)
      .filter((s) => s !== id);
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), near), async (clickId) => {
        const res = await signUp({ click_id: clickId, referred_user_id: 'prop' });
        if (clickId.length >= 1 && clickId.length <= 256) expectError(res, 404, 'click_not_found');
        else expectError(res, 400, 'validation_failed');
      }),
      { numRuns: 60 },
    );
  });
});
