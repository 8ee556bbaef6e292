/**
 * The overview's chart, drawn as SVG by hand: four lines over a shared time axis, a legend, and
 * the same figures as a table for screen readers and for anyone who wants the numbers. (Why not a
 * charting library: README, "Dashboard".)
 */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Metrics, Series } from './api.ts';
import { amount, count, minorPerMajor, pointLabel, sales } from './format.ts';
import { NAMES } from './ui.ts';

export const METRICS: Array<{ key: keyof Metrics; label: string; className: string }> = [
  { key: 'visits', label: NAMES.visits, className: 's1' },
  { key: 'unique_visits', label: NAMES.unique_visits, className: 's2' },
  { key: 'referred_users', label: NAMES.referred_users, className: 's3' },
  { key: 'actions', label: NAMES.actions, className: 's4' },
];

const BASE_PAD = { left: 48, right: 16, top: 12, bottom: 28 };

/** The element's width in CSS pixels, kept up to date: the chart is drawn at its real size, text unstretched. */
function useWidth(fallback: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setWidth(Math.max(240, Math.floor(element.clientWidth))));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

/** A "nice" top for the y axis: 1, 2 or 5 times a power of ten, at least `max`. */
function niceTop(max: number): number {
  if (max <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/**
 * Revenue is money, not a count: its line has its own scale, labelled on the right in the
 * campaign's currency, and shows only when the API reports it (`totals.revenue`).
 */
export function Chart({ data, currency }: { data: Series; currency?: string }) {
  const { ref, width: W } = useWidth(720);
  const H = W < 500 ? 200 : 260;
  const points = data.series;
  const hasRevenue = data.totals.revenue !== undefined;
  const PAD = { ...BASE_PAD, right: hasRevenue ? 56 : BASE_PAD.right };
  const money = (minor: number) => amount(minor, currency);
  // A refund lowers the day's revenue, possibly below zero: the scale starts at the lowest point.
  const revenueOf = (p: Series['series'][number]) => p.revenue ?? 0;
  // A nice number of whole units (at least 4): never a scale of a few cents labelled "$0".
  const perMajor = minorPerMajor(currency);
  const revenueTop = niceTop(Math.max(0, ...points.map(revenueOf)) / perMajor) * perMajor;
  const revenueLow = Math.min(0, ...points.map(revenueOf));
  const top = niceTop(Math.max(0, ...points.flatMap((p) => METRICS.map((m) => p[m.key]))));
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (points.length <= 1 ? innerW / 2 : (i * innerW) / (points.length - 1));
  const y = (v: number) => PAD.top + innerH - (v / top) * innerH;
  const yRevenue = (v: number) => PAD.top + innerH - ((v - revenueLow) / (revenueTop - revenueLow)) * innerH;
  const ticks = [0, top / 4, top / 2, (3 * top) / 4, top];
  // Room per label: an hour's ("Nov 22 14:00") is wider than a day's, and the first, anchored at its
  // start, reaches further right than a centred one.
  const room = data.granularity === 'hour' ? 150 : 110;
  const labelEvery = Math.max(1, Math.ceil(points.length / Math.max(2, Math.floor(innerW / room))));
  // Labels near either edge are anchored on it, so none is cut off.
  const anchor = (i: number) =>
    x(i) < PAD.left + 45 ? 'start' : x(i) > W - PAD.right - 45 ? 'end' : 'middle';
  return html`<figure class="chart">
    <div class="plot" ref=${ref}>
    <svg width=${W} height=${H} viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title">
      <title id="chart-title">
        ${METRICS.map((m) => `${m.label}: ${count(data.totals[m.key])}`).join(', ')}${
          hasRevenue ? `, Revenue: ${money(data.totals.revenue ?? 0)}` : ''
        } per ${data.granularity}
      </title>
      ${ticks.map(
        (t) => html`<g key=${t}>
          <line class="grid" x1=${PAD.left} x2=${W - PAD.right} y1=${y(t)} y2=${y(t)} />
          <text class="tick" x=${PAD.left - 6} y=${y(t) + 4} text-anchor="end">${count(t)}</text>
        </g>`,
      )}
      ${
        hasRevenue
          ? [revenueLow, revenueTop].map(
              (
                t,
              ) => html`<text key=${`r${t}`} class="tick revenue-tick" x=${W - PAD.right + 6} y=${yRevenue(t) + 4}
                text-anchor="start">${amount(t, currency, true)}</text>`,
            )
          : null
      }
      ${points.map((p, i) =>
        i % labelEvery === 0
          ? html`<text key=${p.start} class="tick" x=${x(i)} y=${H - 8} text-anchor=${anchor(i)}>
              ${pointLabel(p.start, data.granularity)}
            </text>`
          : null,
      )}
      ${METRICS.map(
        (m) => html`<polyline
          key=${m.key}
          class="line ${m.className}"
          fill="none"
          points=${points.map((p, i) => `${x(i).toFixed(1)},${y(p[m.key]).toFixed(1)}`).join(' ')}
        />`,
      )}
      ${
        hasRevenue
          ? html`<polyline class="line s5" fill="none"
              points=${points.map((p, i) => `${x(i).toFixed(1)},${yRevenue(revenueOf(p)).toFixed(1)}`).join(' ')} />`
          : null
      }
    </svg>
    </div>
    <figcaption>
      <ul class="legend">
        ${METRICS.map(
          (m) => html`<li key=${m.key}>
            <span class="swatch ${m.className}" aria-hidden="true"></span>${m.label}
            <strong>${count(data.totals[m.key])}</strong>
          </li>`,
        )}
        ${
          hasRevenue
            ? html`<li key="revenue" class="revenue">
                <span class="swatch s5" aria-hidden="true"></span>Revenue
                <strong>${money(data.totals.revenue ?? 0)}</strong>${' '}
                <span class="optional">(right scale${
                  data.totals.conversions === undefined ? '' : `, ${sales(data.totals.conversions)}`
                })</span>
              </li>`
            : null
        }
      </ul>
    </figcaption>
    <details>
      <summary>Show the numbers</summary>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">${data.granularity === 'day' ? 'Day' : 'Hour'} (UTC)</th>
              ${METRICS.map((m) => html`<th scope="col" class="num" key=${m.key}>${m.label}</th>`)}
              ${hasRevenue ? html`<th scope="col" class="num">Sales</th><th scope="col" class="num">Revenue</th>` : null}
            </tr>
          </thead>
          <tbody>
            ${points.map(
              (p) => html`<tr key=${p.start}>
                <th scope="row">${pointLabel(p.start, data.granularity)}</th>
                ${METRICS.map((m) => html`<td class="num" key=${m.key}>${count(p[m.key])}</td>`)}
                ${
                  hasRevenue
                    ? html`<td class="num">${count(p.conversions ?? 0)}</td><td class="num">${money(revenueOf(p))}</td>`
                    : null
                }
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </details>
  </figure>`;
}

/** A row's small chart: one line of values (visits per day), no axes; its label says what the line shows. */
export function Sparkline({ values, label }: { values: number[]; label: string }) {
  const [W, H] = [96, 24];
  const top = Math.max(1, ...values);
  const x = (i: number) => 1 + (values.length <= 1 ? 0 : (i * (W - 2)) / (values.length - 1));
  const points = values.map((v, i) => `${x(i).toFixed(1)},${(H - 2 - (v / top) * (H - 4)).toFixed(1)}`);
  return html`<svg class="spark" width=${W} height=${H} viewBox="0 0 ${W} ${H}" role="img" aria-label=${label}>
    <title>${label}</title>
    <polyline class="line s1" fill="none" points=${points.join(' ')} />
  </svg>`;
}
