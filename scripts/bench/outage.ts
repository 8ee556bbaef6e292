/** Part 5c: what a client sees while DynamoDB Local is paused under keyed writes, and after (`tools/outage.ts`). */
import { measureOutage } from '../../tools/outage.ts';
import { type BenchPart, checks, rows } from './report.ts';
import { settings } from './settings.ts';
import { ms } from './stats.ts';

export const outagePart: BenchPart = {
  ...{ name: 'outage', title: '5c. A DynamoDB outage: what a client sees, and the recovery' },
  async run({ env }) {
    const signal = (name: NodeJS.Signals) => () => void process.kill(env.dynamo.pid!, name);
    const [pause, resume, pauseMs] = [signal('SIGSTOP'), signal('SIGCONT'), settings.outageSeconds * 1000];
    const o = await measureOutage({ baseUrl: env.stack.baseUrl, apiKey: env.apiKey, pause, resume, pauseMs });
    const { clicks, referrals } = o;
    const exact = clicks.counted === clicks.expected && referrals.counted === referrals.expected;
    const answer = ([status, n]: [string, number]) => `${n} × ${status === '0' ? 'no answer' : status}`;
    const answers = Object.entries(o.duringOutage).map(answer);
    return {
      body: [
        'DynamoDB Local paused (SIGSTOP) under keyed writes (actions, signups), each retried with its `Idempotency-Key` after a 5xx, a 409 in progress or a dropped connection (`tools/outage.ts`, which the fault suite also runs). DynamoDB calls have a 5 s deadline and the authorizer 2 s: a 503 with `Retry-After` within about 7 s, never a 500 or a hang; afterwards every counter equals the keys that got a 2xx.',
        rows(`
measure | value
DynamoDB paused | ${(o.pauseMs / 1000).toFixed(1)} s, under ${o.logicalRequests} keyed writes (${o.attempts} attempts)
answers to attempts made during the pause | ${answers.join(', ') || 'none'}
Retry-After of the 503s | ${o.retryAfterValues.join(', ') || '—'}
longest wait for an answer during the pause | ${ms(o.slowestAnswerDuringOutageMs)} ms
from the resume to the first 2xx of a new attempt | ${ms(o.recoveryMs)} ms
total_clicks: keys answered 2xx / counted | ${clicks.expected} / ${clicks.counted}
total_referrals: keys answered 2xx / counted | ${referrals.expected} / ${referrals.counted}
retries answered from a stored answer | ${o.replays}`),
      ],
      summary: `DynamoDB outage (${(o.pauseMs / 1000).toFixed(0)} s): answers within ${ms(o.slowestAnswerDuringOutageMs)} ms (${Object.keys(o.duringOutage).join('/')}), recovery ${ms(o.recoveryMs)} ms, counters ${exact ? 'exact' : 'OFF'}.`,
      checks: checks(`
counters after the retries: total_clicks / total_referrals against the keys answered 2xx | ${clicks.counted} / ${referrals.counted} for ${clicks.expected} / ${referrals.expected} | exact | ${exact}`),
    };
  },
};
