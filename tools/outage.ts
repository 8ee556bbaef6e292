/**
 * What a client sees while DynamoDB is out, and after: a steady stream of keyed writes (actions on
 * a link, actions of a referred user, signups), each retried with its `Idempotency-Key` after a
 * 5xx, a 409 `idempotency_key_in_progress` or a dropped connection until it gets its 2xx, while
 * the caller pauses DynamoDB and later resumes it. Shared by the fault suite (`test/faults/`, the
 * assertions) and `npm run bench` (the figures), so both measure the same thing.
 */
import { randomUUID } from 'node:crypto';

export interface OutageOptions {
  baseUrl: string;
  apiKey: string;
  /** Stops DynamoDB answering (e.g. SIGSTOP to DynamoDB Local's JVM), and lets it answer again. */
  pause: () => void | Promise<void>;
  resume: () => void | Promise<void>;
  pauseMs: number;
  /** New logical requests per second, before, during and 3 s after the outage. */
  ratePerSecond?: number;
  /** A webhook URL for the campaign, to check its events too. */
  webhookUrl?: string;
}

export interface OutageResult {
  pauseMs: number;
  logicalRequests: number;
  attempts: number;
  /** Answers to attempts made while DynamoDB was paused, by status (`0` is a dropped connection). */
  duringOutage: Record<string, number>;
  /** `Retry-After` values of the 503s. */
  retryAfterValues: string[];
  /** The longest any attempt waited for its answer while DynamoDB was paused. */
  slowestAnswerDuringOutageMs: number;
  /** From the resume to the first 2xx of an attempt that started after it. */
  recoveryMs: number;
  /** Every logical request eventually got its 2xx, and the counters count each exactly once. */
  clicks: { expected: number; counted: number };
  referrals: { expected: number; counted: number };
  /** Retries answered from a stored answer. */
  replays: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function measureOutage(options: OutageOptions): Promise<OutageResult> {
  const call = async (method: string, path: string, body?: unknown, key?: string) => {
    const startedAt = Date.now();
    const headers: Record<string, string> = { 'api-key': options.apiKey, 'content-type': 'application/json' };
    if (key) headers['idempotency-key'] = key;
    try {
      const res = await fetch(`${options.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      // biome-ignore lint/suspicious/noExplicitAny: the harness reads a few fields of known answers
      const json: any = text ? JSON.parse(text) : {};
      const replayed = res.headers.get('idempotent-replayed') === 'true';
      return {
        startedAt,
        answeredAt: Date.now(),
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        replayed,
        json,
      };
    } catch {
      return { startedAt, answeredAt: Date.now(), status: 0, retryAfter: null, replayed: false, json: {} };
    }
  };
  const must = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  };

  const campaign = await must('POST', '/api/v1/campaign', { url: 'example.com/outage', name: 'Outage' });
  if (options.webhookUrl)
    await must('PATCH', `/api/v1/campaign?id=${campaign.id}`, { webhook_url: options.webhookUrl });
  const link = await must('POST', '/api/v1/referral_link', { campaign_id: campaign.id });
  const code = link.referral_code;
  await must('POST', '/api/v1/referred_user', { referral_code: code, referred_user_id: 'regular' });

  const attempts: Array<Awaited<ReturnType<typeof call>>> = [];
  const counts = { clicks: 0, referrals: 1 };
  const kinds = [
    ['/api/v1/action/referral_link', () => ({ referral_code: code, action_type: 'outage' })],
    [
      '/api/v1/action/referred_user',
      () => ({ campaign_id: campaign.id, referred_user_id: 'regular', action_type: 'outage' }),
    ],
    ['/api/v1/referred_user', (n: number) => ({ referral_code: code, referred_user_id: `outage-${n}` })],
  ] as const;
  const oneRequest = async (n: number) => {
    const key = randomUUID();
    const [path, body] = kinds[n % 3]!;
    counts[n % 3 === 2 ? 'referrals' : 'clicks']++;
    for (;;) {
      const res = await call('POST', path, body(n), key);
      attempts.push(res);
      if (res.status >= 200 && res.status < 300) return;
      if (res.status >= 400 && res.status < 500 && res.status !== 409 && res.status !== 429)
        throw new Error(`${path}: ${res.status} ${JSON.stringify(res.json)}`);
      await sleep(Number(res.retryAfter) > 0 ? Number(res.retryAfter) * 1000 : 200);
    }
  };

  const inFlight: Promise<void>[] = [];
  const started = Date.now();
  let pausedAt = 0;
  let resumedAt = 0;
  const control = (async () => {
    await sleep(1_000);
    await options.pause();
    pausedAt = Date.now();
    await sleep(options.pauseMs);
    await options.resume();
    resumedAt = Date.now();
  })();
  for (let n = 0; ; n++) {
    await sleep(started + (n * 1000) / (options.ratePerSecond ?? 20) - Date.now());
    if (resumedAt && Date.now() > resumedAt + 3_000) break;
    inFlight.push(oneRequest(n));
  }
  await control;
  await Promise.all(inFlight);

  const during = attempts.filter((a) => a.startedAt >= pausedAt && a.startedAt < resumedAt);
  const duringOutage: Record<string, number> = {};
  for (const a of during) duringOutage[a.status] = (duringOutage[a.status] ?? 0) + 1;
  const recovered = attempts.filter((a) => a.startedAt >= resumedAt && a.status >= 200 && a.status < 300);
  const stored = await must('GET', `/api/v1/referral_link?referral_code=${code}`);
  return {
    pauseMs: resumedAt - pausedAt,
    logicalRequests: counts.clicks + counts.referrals - 1,
    attempts: attempts.length,
    duringOutage,
    retryAfterValues: [...new Set(attempts.filter((a) => a.status === 503).map((a) => String(a.retryAfter)))],
    slowestAnswerDuringOutageMs: Math.max(0, ...during.map((a) => a.answeredAt - a.startedAt)),
    recoveryMs: Math.min(...recovered.map((a) => a.answeredAt)) - resumedAt,
    clicks: { expected: counts.clicks, counted: stored.total_clicks },
    referrals: { expected: counts.referrals, counted: stored.total_referrals },
    replays: attempts.filter((a) => a.replayed).length,
  };
}
