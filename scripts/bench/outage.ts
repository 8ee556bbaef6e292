/**
 * What a client sees while DynamoDB is out, and after: a steady stream of keyed writes (actions on
 * a link, actions of a referred user, signups), each retried with its `Idempotency-Key` after a
 * 5xx, a 409 `idempotency_key_in_progress` or a dropped connection until it gets its 2xx, while
 * the caller pauses DynamoDB and later resumes it. Shared by `npm run bench` (the figures) and the
 * fault suite (`test/faults/`, the assertions), so both measure the same thing.
 */
import { randomUUID } from 'node:crypto';

export interface OutageOptions {
  baseUrl: string;
  apiKey: string;
  /** Stops DynamoDB answering (e.g. SIGSTOP to DynamoDB Local's JVM). */
  pause: () => void | Promise<void>;
  /** Lets it answer again. */
  resume: () => void | Promise<void>;
  pauseMs: number;
  /** New logical requests per second, before, during and a little after the outage. */
  ratePerSecond?: number;
  /** How long requests keep starting after the resume. */
  afterMs?: number;
  /** A webhook URL for the campaign, to check its events too. */
  webhookUrl?: string;
}

export interface AttemptRecord {
  startedAt: number;
  answeredAt: number;
  status: number;
  retryAfter: string | null;
  replayed: boolean;
}

export interface OutageResult {
  campaignId: string;
  linkCode: string;
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
  replays: number;
}

interface Json {
  // biome-ignore lint/suspicious/noExplicitAny: the harness reads a few fields of known answers
  [key: string]: any;
}

export async function measureOutage(options: OutageOptions): Promise<OutageResult> {
  const rate = options.ratePerSecond ?? 20;
  const afterMs = options.afterMs ?? 3_000;
  const headers = { 'api-key': options.apiKey, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown, key?: string) => {
    const startedAt = Date.now();
    try {
      const res = await fetch(`${options.baseUrl}${path}`, {
        method,
        headers: key ? { ...headers, 'idempotency-key': key } : headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      return {
        startedAt,
        answeredAt: Date.now(),
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        replayed: res.headers.get('idempotent-replayed') === 'true',
        body: (text ? JSON.parse(text) : undefined) as Json,
      };
    } catch {
      return { startedAt, answeredAt: Date.now(), status: 0, retryAfter: null, replayed: false, body: {} };
    }
  };
  const must = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  const campaign = await must('POST', '/api/v1/campaign', { url: 'example.com/outage', name: 'Outage' });
  if (options.webhookUrl) {
    await must('PATCH', `/api/v1/campaign?id=${campaign.id}`, { webhook_url: options.webhookUrl });
  }
  const link = await must('POST', '/api/v1/referral_link', { campaign_id: campaign.id });
  await must('POST', '/api/v1/referred_user', {
    referral_code: link.referral_code,
    referred_user_id: 'regular',
  });

  const attempts: AttemptRecord[] = [];
  let clicks = 0;
  let referrals = 1;
  let replays = 0;
  const oneRequest = async (n: number) => {
    const key = randomUUID();
    const kind = n % 3;
    const [path, body] =
      kind === 0
        ? ['/api/v1/action/referral_link', { referral_code: link.referral_code, action_type: 'outage' }]
        : kind === 1
          ? [
              '/api/v1/action/referred_user',
              { campaign_id: campaign.id, referred_user_id: 'regular', action_type: 'outage' },
            ]
          : ['/api/v1/referred_user', { referral_code: link.referral_code, referred_user_id: `outage-${n}` }];
    if (kind === 2) referrals++;
    else clicks++;
    for (;;) {
      const res = await call('POST', path as string, body, key);
      attempts.push(res);
      if (res.replayed) replays++;
      if (res.status >= 200 && res.status < 300) return;
      if (res.status >= 400 && res.status < 500 && res.status !== 409 && res.status !== 429) {
        throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      const wait = Number(res.retryAfter) > 0 ? Number(res.retryAfter) * 1000 : 200;
      await new Promise((r) => setTimeout(r, wait));
    }
  };

  const inFlight: Promise<void>[] = [];
  const started = Date.now();
  let pausedAt = 0;
  let resumedAt = 0;
  const control = (async () => {
    await new Promise((r) => setTimeout(r, 1_000));
    await options.pause();
    pausedAt = Date.now();
    await new Promise((r) => setTimeout(r, options.pauseMs));
    await options.resume();
    resumedAt = Date.now();
  })();
  for (let n = 0; ; n++) {
    const due = started + (n * 1000) / rate;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    if (resumedAt && Date.now() > resumedAt + afterMs) break;
    inFlight.push(oneRequest(n));
  }
  await control;
  await Promise.all(inFlight);

  const during = attempts.filter((a) => a.startedAt >= pausedAt && a.startedAt < resumedAt);
  const duringOutage: Record<string, number> = {};
  for (const a of during) duringOutage[a.status] = (duringOutage[a.status] ?? 0) + 1;
  const firstAfter = attempts
    .filter((a) => a.startedAt >= resumedAt && a.status >= 200 && a.status < 300)
    .reduce((min, a) => Math.min(min, a.answeredAt), Number.POSITIVE_INFINITY);
  const stored = await must('GET', `/api/v1/referral_link?referral_code=${link.referral_code}`);
  return {
    campaignId: campaign.id,
    linkCode: link.referral_code,
    pauseMs: resumedAt - pausedAt,
    logicalRequests: clicks + referrals - 1,
    attempts: attempts.length,
    duringOutage,
    retryAfterValues: [...new Set(attempts.filter((a) => a.status === 503).map((a) => String(a.retryAfter)))],
    slowestAnswerDuringOutageMs: during.reduce((max, a) => Math.max(max, a.answeredAt - a.startedAt), 0),
    recoveryMs: firstAfter - resumedAt,
    clicks: { expected: clicks, counted: stored.total_clicks },
    referrals: { expected: referrals, counted: stored.total_referrals },
    replays,
  };
}
