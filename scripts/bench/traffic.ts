/** Traffic for the parts: campaigns and links, visitors, and two load generators (`runLoad`, `paced`). */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { linkFromItem, linkKey, newLinkItem } from '../../lib/db/entities/link.ts';
import { CODE_ALPHABET } from '../../lib/domain/link-rules.ts';
import { getItems, putItems } from '../../tools/table.ts';
import { mapLimit } from '../../tools/wait.ts';
import { type BenchEnvironment, benchClient, type RequestSpec, reserveIds } from './environment.ts';
import type { LoadJob, LoadResult } from './load-worker.ts';
import { sleep, spread, timed } from './stats.ts';

export const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

let visitorRuns = 0;
/**
 * A user agent per visit, each run its own: a visitor is a hash of address and user agent, and every
 * local request comes from 127.0.0.1. Digits only: an id with a word such as `feed` reads as a bot.
 */
export function visitors() {
  const run = ++visitorRuns;
  return (i: number) => `${BROWSER} v${run}.${i}`;
}

type Env = BenchEnvironment;
export type BenchLink = { id: number; code: string; referrer: string | null };
export const visitOf = (code: string, userAgent: string): RequestSpec => {
  return { method: 'GET', path: `/r/${code}`, headers: { 'user-agent': userAgent } };
};

const newCampaign = (env: BenchEnvironment, name: string) => {
  const campaign = { url: `https://example.com/${name}`, name };
  return env.client.call<{ id: string; url: string }>('POST', '/api/v1/campaign', campaign);
};

/** A campaign made through the API with `n` links, each of a referrer of its own, made 8 at a time. */
export async function campaignWithLinks(env: BenchEnvironment, name: string, n: number) {
  const { id } = await newCampaign(env, name);
  type Made = { id: number; referral_code: string };
  const links = await mapLimit(Array.from({ length: n }), 8, async (_, i): Promise<BenchLink> => {
    const body = { campaign_id: id, referrer_id: `${name}-${i}` };
    const link = await env.maker.call<Made>('POST', '/api/v1/referral_link', body);
    return { id: link.id, code: link.referral_code, referrer: body.referrer_id };
  });
  return { id, links, codes: links.map((l) => l.code) };
}

/** The link of `code` as stored, read straight from the table. */
export async function storedLink(env: BenchEnvironment, code: string) {
  return linkFromItem((await getItems([linkKey(code)], env.table))[0] ?? {});
}

/** The code of the `i`-th link of a campaign whose codes start with `tag`. */
export const codeOf = (tag: string, i: number): string =>
  (i < 32 ? tag : codeOf(tag, Math.floor(i / 32))) + CODE_ALPHABET[i % 32];

let tags = 0;
/** A campaign made through the API and `n` links written straight into the table, link i created at +i ms. */
export async function campaignWithWrittenLinks(env: Env, name: string, n: number, refs: boolean) {
  const { id: campaignId, url: campaignUrl } = await newCampaign(env, name);
  const firstId = await reserveIds(env, 'link', n);
  const tag = `W${(tags++).toString(36)}${Date.now().toString(36)}`.toUpperCase();
  const createdMs = Date.now() - n;
  const links = Array.from({ length: n }, (_, i): BenchLink => {
    return { id: firstId + i, code: codeOf(tag, i), referrer: refs ? `${name}-${i}` : null };
  });
  const items = links.map((l, i) => {
    const link = { id: l.id, code: l.code, referrerId: l.referrer, now: new Date(createdMs + i) };
    return newLinkItem({ tenant: env.tenant, campaignId, campaignUrl, ...link });
  });
  const [, loadMs] = await timed(() => putItems(items, env.table, { writers: 8 }));
  return { id: campaignId, links, codes: links.map((l) => l.code), createdMs, loadSeconds: loadMs / 1000 };
}

/** A campaign of `n` links, each of a referrer of its own: made through the API, or past 100 written straight. */
export const campaignOfReferrers = (env: Env, name: string, n: number) =>
  n > 100 ? campaignWithWrittenLinks(env, name, n, true) : campaignWithLinks(env, name, n);

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const worker = fileURLToPath(new URL('./load-worker.ts', import.meta.url));
  const args = [...process.execArgv, worker, JSON.stringify(job)];
  return JSON.parse((await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 24 })).stdout);
}

export type Answer = { i: number; status: number; at: number };
type OnAnswer = (a: Answer) => void;
type Request = (i: number) => RequestSpec;
/**
 * `n` requests, request i sent at i / `rate` s whatever the answers (at most 16 in flight): the
 * answers by status (0: none), the seconds to the last answer, the answers' delays after their due.
 */
export async function paced(env: Env, n: number, rate: number, request: Request, onAnswer?: OnAnswer) {
  const client = benchClient(env.stack.baseUrl, env.apiKey, 16);
  const [statuses, late, sent] = [{} as Record<number, number>, [] as number[], [] as Array<Promise<void>>];
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const due = started + (i * 1000) / rate;
    if (due > performance.now()) await sleep(due - performance.now());
    const answered = (status: number) => {
      const at = performance.now();
      statuses[status] = (statuses[status] ?? 0) + 1;
      late.push(at - due);
      onAnswer?.({ i, status, at });
    };
    const failed = () => answered(0);
    sent.push(client.send(request(i)).then((r) => answered(r.status), failed));
  }
  await Promise.all(sent).finally(() => client.close());
  return { statuses, seconds: (performance.now() - started) / 1000, latency: spread(late) };
}
