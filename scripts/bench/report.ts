/**
 * The bench's report: each part's section is prose, tables (one renderer for all of them) and
 * Mermaid `xychart-beta` charts, which the code host renders; the Markdown goes to a file and the
 * console gets the same tables, the summary and the goals missed.
 */
export type Cell = string | number | undefined;
export type Row = Record<string, Cell>;
/** A section's body: prose or a chart, or a table: objects (a column per key) or arrays (the first the headers). */
export type Block = string | Row[] | Cell[][];

export interface Section {
  title: string;
  /** Falsy entries are left out. */
  body: Array<Block | false>;
}

/** A table as Markdown, columns padded so it reads the same in a terminal. */
export function table(rows: Row[] | Cell[][]): string {
  const arrays = Array.isArray(rows[0]);
  const headers = arrays
    ? (rows[0] as Cell[]).map(String)
    : [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const body = arrays ? (rows.slice(1) as Cell[][]) : (rows as Row[]).map((r) => headers.map((h) => r[h]));
  const cells = body.map((r) => headers.map((_, i) => String(r[i] ?? '').replace(/\|/g, '\\|')));
  const widths = headers.map((h, i) => Math.max(3, h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`.trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** A Mermaid chart: one bar per label for our figure, the floor as a line across the same labels. */
export function chart(title: string, unit: string, points: Array<[string, number, number]>): string {
  const round = (v: number) => (Number.isFinite(v) ? Number(v.toFixed(2)) : 0);
  const max = Math.max(1, ...points.flatMap(([, v, f]) => [round(v), round(f)]));
  return [
    '```mermaid',
    'xychart-beta',
    `  title "${title}"`,
    `  x-axis [${points.map(([label]) => JSON.stringify(label)).join(', ')}]`,
    `  y-axis "${unit}" 0 --> ${Math.ceil(max * 1.1)}`,
    `  bar [${points.map(([, v]) => round(v)).join(', ')}]`,
    `  line [${points.map(([, , f]) => round(f)).join(', ')}]`,
    '```',
  ].join('\n');
}

const list = (lines: string[]) => (lines.length ? lines.map((l) => `- ${l}`).join('\n') : '- None.');
const blocks = (body: Array<Block | false>) =>
  body.flatMap((b) => (b === false || b.length === 0 ? [] : typeof b === 'string' ? b : table(b)));

export interface Report {
  intro: string;
  machine: Row[];
  summary: string[];
  findings: string[];
  sections: Section[];
  rerun: string;
}

export function renderMarkdown(r: Report): string {
  const out = ['# Benchmark results', r.intro, table(r.machine), `## Summary\n\n${list(r.summary)}`];
  out.push(`### Goals missed, budgets exceeded, problems found\n\n${list(r.findings)}`);
  for (const s of r.sections)
    out.push(`${/^\d+[a-z]/.test(s.title) ? '###' : '##'} ${s.title}`, ...blocks(s.body));
  out.push('## How to rerun', r.rerun);
  return `${out.join('\n\n')}\n`;
}

/** The tables of every section, then the summary and the goals missed. */
export function renderConsole(r: Report): string {
  const tables = (s: Section) => blocks(s.body.filter((b) => typeof b !== 'string'));
  return [
    ...r.sections.map((s) => `\n== ${s.title} ==\n${tables(s).join('\n\n')}`),
    `\n== Summary ==\n${list(r.summary)}`,
    `\n== Goals missed / budgets exceeded / problems ==\n${list(r.findings)}`,
  ].join('\n');
}
