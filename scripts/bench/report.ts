/** What a part is and gives back, and the report: Markdown with Mermaid charts, and the console's tables. */
import type { EndpointCase, Fixtures } from './endpoints.ts';
import type { BenchEnvironment } from './environment.ts';

export type Cell = string | number | undefined;
/** A section's body: prose or a chart, or a table (the first row the headers). */
export type Block = string | Cell[][];
/** A goal and how the run did: a row of a goals table and, when missed, a finding. */
export type Check = { what: string; value: string; goal: string; met: boolean };
/** What a part is given: the stack and the endpoint cases (part 1 makes them), earlier parts' data. */
export type Context = { env: BenchEnvironment; fixtures: Fixtures; cases: EndpointCase[]; data: Data };
type Data = Record<string, unknown>;
/** A part's section, summary line, goals, other problems (falsy: none) and what later parts use. */
export interface Outcome {
  body: Array<Block | false>;
  summary: string;
  checks?: Check[];
  findings?: Array<string | false | undefined>;
  data?: unknown;
}
/** One part: the name `BENCH_PARTS` knows, its section's title, and `standalone` if it needs no bench stack. */
export type BenchPart = { name: string; title: string; standalone?: true; run(c: Context): Promise<Outcome> };
/** A table written as the text it renders to, cells split at ' | ': the headers' line, then the rows' lines. */
export const rows = (head: string, lines: string[] = []): string[][] => {
  const cells = (text: string) => text.split(/ \|(?= |$)/).map((cell) => cell.trim());
  return [head.trim(), ...lines].join('\n').split('\n').map(cells);
};
/** Goals written likewise, a line each: what | value | goal | met (`true` or `false`). */
export const checks = (text: string): Check[] =>
  rows(text).map(([what = '', value = '', goal = '', met]) => ({ what, value, goal, met: met === 'true' }));
export const findingsOf = (part: string, o: Outcome) => [
  ...(o.checks ?? []).filter((c) => !c.met).map((c) => `${part}: ${c.what}: ${c.value} (goal ${c.goal}).`),
  ...(o.findings ?? []).filter((f): f is string => !!f),
];

/** A table as Markdown, columns padded so it reads the same in a terminal. */
export function table([head = [], ...body]: Cell[][]): string {
  const cells = [head, ...body].map((r) => head.map((_, i) => String(r[i] ?? '').replace(/\|/g, '\\|')));
  const widths = head.map((_, i) => Math.max(3, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`.trimEnd();
  return [line(cells[0]!), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join('\n');
}

export type Point = [string, number, number];
/** A Mermaid chart: one bar per label for our figure, the floor as a line across the same labels. */
export function chart(title: string, unit: string, points: Point[]): string {
  const round = (v: number) => (Number.isFinite(v) ? Number(v.toFixed(2)) : 0);
  const max = Math.max(1, ...points.flatMap(([, v, f]) => [round(v), round(f)]));
  const series = (i: 1 | 2) => points.map((p) => round(p[i])).join(', ');
  return `\`\`\`mermaid\nxychart-beta\n  title "${title}"\n  x-axis [${points.map(([label]) => JSON.stringify(label)).join(', ')}]\n  y-axis "${unit}" 0 --> ${Math.ceil(max * 1.1)}\n  bar [${series(1)}]\n  line [${series(2)}]\n\`\`\``;
}

const list = (lines: string[]) => (lines.length ? lines.map((l) => `- ${l}`).join('\n') : '- None.');
const blocks = (body: Array<Block | false>) =>
  body.flatMap((b) => (b === false || b.length === 0 ? [] : typeof b === 'string' ? b : table(b)));

export type Section = { title: string; body: Array<Block | false> };
/** The report: its intro and how to rerun, the machine's table, the summary, findings and sections. */
export type Report = Record<'intro' | 'rerun', string> & Record<'summary' | 'findings', string[]> & Sections;
type Sections = { machine: Cell[][]; sections: Section[] };

export function renderMarkdown(r: Report): string {
  const out = ['# Benchmark results', r.intro, table(r.machine), `## Summary\n\n${list(r.summary)}`];
  out.push(`### Goals missed, budgets exceeded, problems found\n\n${list(r.findings)}`);
  for (const s of r.sections)
    out.push(`${/^\d+[a-z]/.test(s.title) ? '###' : '##'} ${s.title}`, ...blocks(s.body));
  out.push('## How to rerun', r.rerun);
  return `${out.join('\n\n')}\n`;
}

export function renderConsole(r: Report) {
  const tables = (s: Section) => blocks(s.body.filter((b) => typeof b !== 'string')).join('\n\n');
  const sections = r.sections.map((s) => `\n== ${s.title} ==\n${tables(s)}`);
  return [
    ...sections,
    `\n== Summary ==\n${list(r.summary)}`,
    `\n== Goals missed / budgets exceeded / problems ==\n${list(r.findings)}`,
  ].join('\n');
}
