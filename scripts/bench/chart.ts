/**
 * A hand-written SVG chart of the bench's results: horizontal bar panels, each bar beside its
 * floor. No dependencies; the output is plain SVG text that renders in GitHub and browsers.
 */

export interface Bar {
  value: number;
  color: string;
}

export interface PanelRow {
  label: string;
  bars: Bar[];
  /** Text after the bars, e.g. a ratio. */
  note?: string;
}

export interface Panel {
  title: string;
  unit: string;
  rows: PanelRow[];
  legend: Array<{ label: string; color: string }>;
  /** Vertical reference lines (e.g. the floor, a budget). */
  lines?: Array<{ value: number; label: string; color: string }>;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const WIDTH = 980;
const LABEL_W = 360;
const NOTE_W = 70;
const PLOT_W = WIDTH - LABEL_W - NOTE_W - 30;
const BAR_H = 9;
const ROW_GAP = 6;

/** A round tick step giving about five ticks up to `v`. */
function niceStep(v: number): number {
  if (!(v > 0)) return 1;
  const raw = v / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function fmt(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}

function renderPanel(panel: Panel, top: number): { svg: string; height: number } {
  const rowH = panel.rows.reduce((a, r) => Math.max(a, r.bars.length), 1) * BAR_H + ROW_GAP;
  const highest = Math.max(
    ...panel.rows.flatMap((r) => r.bars.map((b) => b.value)).filter(Number.isFinite),
    ...(panel.lines ?? []).map((l) => l.value),
  );
  const step = niceStep(highest);
  const ticks = Math.max(1, Math.ceil(highest / step));
  const max = ticks * step;
  const x = (v: number) => LABEL_W + (Math.max(0, v) / max) * PLOT_W;
  const parts: string[] = [];
  parts.push(`<text x="10" y="${top + 16}" class="title">${esc(panel.title)}</text>`);
  let lx = 10;
  for (const l of panel.legend) {
    parts.push(`<rect x="${lx}" y="${top + 23}" width="10" height="10" fill="${l.color}"/>`);
    parts.push(`<text x="${lx + 14}" y="${top + 32}" class="small">${esc(l.label)}</text>`);
    lx += 24 + l.label.length * 5.6;
  }
  const plotTop = top + 46;
  const plotH = panel.rows.length * rowH;
  for (let i = 0; i <= ticks; i++) {
    const v = step * i;
    parts.push(`<line x1="${x(v)}" y1="${plotTop}" x2="${x(v)}" y2="${plotTop + plotH}" class="grid"/>`);
    parts.push(
      `<text x="${x(v)}" y="${plotTop + plotH + 12}" class="small" text-anchor="middle">${fmt(v)}</text>`,
    );
  }
  parts.push(
    `<text x="${LABEL_W + PLOT_W}" y="${plotTop + plotH + 24}" class="small" text-anchor="end">${esc(panel.unit)}</text>`,
  );
  panel.rows.forEach((row, i) => {
    const y = plotTop + i * rowH;
    parts.push(
      `<text x="${LABEL_W - 6}" y="${y + rowH / 2 + 3}" class="label" text-anchor="end">${esc(row.label)}</text>`,
    );
    row.bars.forEach((bar, j) => {
      if (!Number.isFinite(bar.value)) return;
      const w = Math.max(0.5, x(bar.value) - LABEL_W);
      parts.push(
        `<rect x="${LABEL_W}" y="${y + j * BAR_H + 2}" width="${w.toFixed(1)}" height="${BAR_H - 2}" fill="${bar.color}"><title>${esc(`${row.label}: ${fmt(bar.value)} ${panel.unit}`)}</title></rect>`,
      );
    });
    if (row.note) {
      parts.push(
        `<text x="${LABEL_W + PLOT_W + 8}" y="${y + rowH / 2 + 3}" class="small">${esc(row.note)}</text>`,
      );
    }
  });
  (panel.lines ?? []).forEach((line, i) => {
    parts.push(
      `<line x1="${x(line.value)}" y1="${plotTop - 2}" x2="${x(line.value)}" y2="${plotTop + plotH}" stroke="${line.color}" stroke-width="1.5" stroke-dasharray="4 3"/>`,
    );
    // Labels above the plot, alternating left and right of their line so neighbours do not collide.
    const anchor = i % 2 === 0 ? 'end' : 'start';
    const dx = i % 2 === 0 ? -3 : 3;
    parts.push(
      `<text x="${x(line.value) + dx}" y="${plotTop - 4}" class="small" fill="${line.color}" text-anchor="${anchor}">${esc(line.label)}</text>`,
    );
  });
  return { svg: parts.join('\n'), height: 46 + plotH + 34 };
}

export function renderChart(title: string, subtitle: string, panels: Panel[]): string {
  let y = 46;
  const bodies: string[] = [];
  for (const panel of panels) {
    const { svg, height } = renderPanel(panel, y);
    bodies.push(svg);
    y += height + 12;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y}" viewBox="0 0 ${WIDTH} ${y}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif">
<style>
  .title { font-size: 13px; font-weight: 600; fill: #222; }
  .label { font-size: 10.5px; fill: #333; }
  .small { font-size: 9.5px; fill: #555; }
  .grid { stroke: #e4e4e4; stroke-width: 1; }
</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="10" y="20" font-size="15" font-weight="700" fill="#111">${esc(title)}</text>
<text x="10" y="36" class="small">${esc(subtitle)}</text>
${bodies.join('\n')}
</svg>
`;
}

export const COLORS = {
  ours: '#2f6fde',
  floor: '#a9b4c2',
  p99: '#9cc0f5',
  floorP99: '#d6dbe2',
  over: '#d9534f',
  ok: '#3a9a5b',
  budget: '#d9534f',
};
