/** A campaign's overview: its activity over a chosen range (by hour or by day), and its leaderboard. */
import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { type Campaign, get, type Series, type TopEntry } from '../api.ts';
import { Chart } from '../chart.ts';
import { amount, count, percent, sales, toStamp } from '../format.ts';
import { ErrorNote, Glossary, inputValue, NAMES } from '../ui.ts';

/** Every this many ms the overview asks again, so new visits show without a reload. */
const REFRESH_MS = 5000;
const HOUR = 3600_000;
const DAY = 24 * HOUR;
/** The API's limit for hours (`lib/analytics/range.ts`): 7 days; days may span 400. */
const MAX_HOURS_MS = 7 * DAY;

const PRESETS = [
  { value: '24h', label: 'Last 24 hours', ms: DAY },
  { value: '7d', label: 'Last 7 days', ms: 7 * DAY },
  { value: '30d', label: 'Last 30 days', ms: 30 * DAY },
  { value: '90d', label: 'Last 90 days', ms: 90 * DAY },
] as const;

const day = (date: Date) => date.toISOString().slice(0, 10);

/** The range chosen, as the API's `from` and `to` (UTC): a preset ends now, custom dates span whole days. */
function rangeOf(choice: string, from: string, to: string, now = new Date()) {
  const preset = PRESETS.find((p) => p.value === choice);
  if (preset) return { from: new Date(now.getTime() - preset.ms), to: now };
  const end = new Date(`${to}T23:59:59Z`);
  return { from: new Date(`${from}T00:00:00Z`), to: end > now ? now : end };
}

function RangePicker({
  choice,
  from,
  to,
  onChange,
}: {
  choice: string;
  from: string;
  to: string;
  onChange: (c: { choice?: string; from?: string; to?: string }) => void;
}) {
  const today = day(new Date());
  return html`<div class="inline-fields range">
    <label>Range <select value=${choice} onChange=${(e: Event) => onChange({ choice: inputValue(e) })}>
      ${PRESETS.map((p) => html`<option key=${p.value} value=${p.value}>${p.label}</option>`)}
      <option value="custom">Custom dates</option>
    </select></label>
    ${
      choice === 'custom'
        ? html`<label>From <input type="date" required max=${to || today} value=${from}
              onChange=${(e: Event) => inputValue(e) && onChange({ from: inputValue(e) })} /></label>
            <label>To <input type="date" required min=${from} max=${today} value=${to}
              onChange=${(e: Event) => inputValue(e) && onChange({ to: inputValue(e) })} /></label>
            <span class="hint">UTC days</span>`
        : null
    }
  </div>`;
}

/**
 * The range's funnel: visits, unique visits, signups and actions, each with its share of the step
 * before, and revenue once the API reports conversions (`totals.revenue`). A bar's width is set
 * through the CSSOM (Preact's style object), which `style-src 'self'` allows: no inline style.
 */
function Funnel({ totals, label, currency }: { totals: Series['totals']; label: string; currency: string }) {
  const steps = [
    { name: NAMES.visits, value: totals.visits, share: null },
    {
      name: NAMES.unique_visits,
      value: totals.unique_visits,
      share: `${percent(totals.unique_visits, totals.visits)} of visits`,
    },
    {
      name: NAMES.referred_users,
      value: totals.referred_users,
      share: `${percent(totals.referred_users, totals.unique_visits)} of unique visits`,
    },
    {
      name: NAMES.actions,
      value: totals.actions,
      share:
        totals.referred_users > 0
          ? `${(Math.round((totals.actions / totals.referred_users) * 10) / 10).toLocaleString('en-US')} per signup`
          : '—',
    },
  ];
  const widest = Math.max(1, ...steps.map((s) => s.value));
  return html`<section aria-labelledby="funnel-title" class="card">
    <h2 id="funnel-title">Funnel <span class="optional">${label}</span></h2>
    <ol class="funnel">
      ${steps.map(
        (s) => html`<li key=${s.name}>
          <span class="step">${s.name}</span>
          <strong class="value">${count(s.value)}</strong>
          <span class="ratio">${s.share ?? ''}</span>
          <span class="funnel-bar" aria-hidden="true"><span class="fill" style=${{ width: `${Math.max(0.5, (s.value / widest) * 100)}%` }}></span></span>
        </li>`,
      )}
      ${
        totals.revenue === undefined
          ? null
          : html`<li key="revenue" class="revenue">
              <span class="step">Revenue</span>
              <strong class="value">${amount(totals.revenue, currency)}</strong>
              <span class="ratio">${totals.conversions === undefined ? '' : sales(totals.conversions)}</span>
            </li>`
      }
    </ol>
    <${Glossary} />
  </section>`;
}

/** The leaderboard's rankings (endpoint 17's `metric`), as the page names them. */
const RANKINGS = [
  { metric: 'visits', label: 'visits', name: NAMES.visits },
  { metric: 'unique_visits', label: 'unique visits', name: NAMES.unique_visits },
  { metric: 'referred_users', label: 'signups', name: NAMES.referred_users },
  { metric: 'actions', label: 'actions', name: NAMES.actions },
  { metric: 'conversions', label: 'sales', name: 'Sales' },
  { metric: 'revenue', label: 'revenue', name: 'Revenue' },
];

const metricName = (metric: string) => RANKINGS.find((r) => r.metric === metric)?.name ?? metric;

export function Overview({ campaign }: { campaign: Campaign }) {
  const [range, setRange] = useState({
    choice: '30d',
    from: day(new Date(Date.now() - 29 * DAY)),
    to: day(new Date()),
  });
  const [wanted, setGranularity] = useState<'hour' | 'day'>('day');
  const [series, setSeries] = useState<Series | null>(null);
  const [top, setTop] = useState<TopEntry[] | null>(null);
  const [metric, setMetric] = useState('visits');
  const [by, setBy] = useState<'referral_link' | 'referrer'>('referral_link');
  const [error, setError] = useState<unknown>(null);

  const span = rangeOf(range.choice, range.from, range.to);
  // Hours only where the API serves them (7 days at most); a longer range is shown by day.
  const hourAllowed = span.to.getTime() - span.from.getTime() <= MAX_HOURS_MS;
  const granularity = hourAllowed ? wanted : 'day';

  const load = useCallback(async () => {
    const { from, to } = rangeOf(range.choice, range.from, range.to);
    try {
      const [s, t] = await Promise.all([
        get<Series>(`analytics/${campaign.id}`, { granularity, from: toStamp(from), to: toStamp(to) }),
        get<TopEntry[]>(`analytics/${campaign.id}/top`, { metric, by, limit: 10 }),
      ]);
      setSeries(s);
      setTop(t);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  }, [campaign.id, granularity, range, metric, by]);

  useEffect(() => {
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);

  const empty = series?.series.every((p) => p.visits === 0 && p.referred_users === 0 && p.actions === 0);
  const rangeLabel =
    range.choice === 'custom'
      ? `${range.from} to ${range.to} (UTC days)`
      : (PRESETS.find((p) => p.value === range.choice)?.label.toLowerCase() ?? '');
  return html`
    <${ErrorNote} error=${error} />
    ${series ? html`<${Funnel} totals=${series.totals} label=${rangeLabel} currency=${campaign.currency} />` : null}
    <section aria-labelledby="activity-title" class="card">
      <div class="section-head">
        <h2 id="activity-title">Activity</h2>
        <div class="controls">
          <${RangePicker} ...${range} onChange=${(c: Partial<typeof range>) => setRange({ ...range, ...c })} />
          <fieldset class="switch">
            <legend class="visually-hidden">Group by</legend>
            ${(['hour', 'day'] as const).map(
              (g) => html`<label key=${g}>
                <input type="radio" name="granularity" value=${g} checked=${granularity === g}
                  disabled=${g === 'hour' && !hourAllowed} onChange=${() => setGranularity(g)} />
                ${g === 'hour' ? (hourAllowed ? 'By hour' : 'By hour (7 days at most)') : 'By day'}
              </label>`,
            )}
          </fieldset>
        </div>
      </div>
      ${
        !series
          ? html`<p>Loading…</p>`
          : html`${
              empty
                ? html`<p class="empty">
                  No visits yet in this range. Create a referral link on the${' '}<a
                    href="#/campaigns/${campaign.id}/links">Links</a>${' '}tab and share it: every visit through it shows here
                  within seconds.
                </p>`
                : null
            }
            <${Chart} data=${series} currency=${campaign.currency} />`
      }
    </section>
    <section aria-labelledby="top-title" class="card">
      <div class="section-head">
        <h2 id="top-title">Leaderboard</h2>
        <div class="inline-fields">
          <label>Rank <select value=${by} onChange=${(e: Event) => setBy(inputValue(e) as 'referrer')}>
            <option value="referral_link">links</option>
            <option value="referrer">referrers</option>
          </select></label>
          <label>by <select value=${metric} onChange=${(e: Event) => setMetric(inputValue(e))}>
            ${RANKINGS.map((r) => html`<option key=${r.metric} value=${r.metric}>${r.label}</option>`)}
          </select></label>
        </div>
      </div>
      ${
        !top
          ? html`<p>Loading…</p>`
          : top.length === 0
            ? html`<p class="empty">Nobody on the board yet: it fills as soon as a link gets its first ${metric === 'revenue' ? 'sale' : metricName(metric).toLowerCase().replace(/s$/, '')}.</p>`
            : html`<div class="scroll"><table class="leaderboard">
              <thead><tr><th scope="col" class="num">#</th><th scope="col">${by === 'referrer' ? 'Referrer' : 'Link'}</th>
                <th scope="col" class="num">${metricName(metric)}</th></tr></thead>
              <tbody>
                ${top.map(
                  (e) => html`<tr key=${e.rank}>
                    <td class="num">${e.rank}</td>
                    <td>${'referrer_id' in e ? e.referrer_id : html`<code>${e.referral_code}</code>`}</td>
                    <td class="num">${metric === 'revenue' ? amount(e.value, campaign.currency) : count(e.value)}</td>
                  </tr>`,
                )}
              </tbody>
            </table></div>`
      }
    </section>
  `;
}
