/**
 * A vitest reporter that prints, once the run ends, how long it took: each project's wall time
 * (its first file's start to its last file's end; a project's files run side by side, so this is
 * not the sum of theirs), and the slowest files with their wall times. `npm run test:times`
 * runs the suite with it beside the default reporter; `TEST_TIMES=<n>` lists n files (default 10).
 */
import type { Reporter, TestModule } from 'vitest/node';

interface Span {
  project: string;
  file: string;
  start: number;
  end?: number;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`.padStart(8);

export default class TimesReporter implements Reporter {
  private readonly spans = new Map<string, Span>();
  private runStart = Date.now();

  onTestRunStart(): void {
    this.runStart = Date.now();
  }

  onTestModuleStart(module: TestModule): void {
    this.spans.set(module.id, {
      project: module.project.name,
      file: module.relativeModuleId,
      start: Date.now(),
    });
  }

  onTestModuleEnd(module: TestModule): void {
    const span = this.spans.get(module.id);
    if (span) span.end = Date.now();
  }

  onTestRunEnd(): void {
    const done = [...this.spans.values()].filter((s): s is Required<Span> => s.end !== undefined);
    const projects = new Map<string, { start: number; end: number; files: number }>();
    for (const s of done) {
      const p = projects.get(s.project) ?? { start: s.start, end: s.end, files: 0 };
      projects.set(s.project, {
        start: Math.min(p.start, s.start),
        end: Math.max(p.end, s.end),
        files: p.files + 1,
      });
    }
    const lines = [
      `Wall time of the run's tests: ${seconds(Date.now() - this.runStart).trim()}`,
      'Projects:',
    ];
    for (const [name, p] of [...projects].sort((a, b) => a[1].start - b[1].start)) {
      lines.push(`${seconds(p.end - p.start)}  ${name} (${p.files} files)`);
    }
    const count = Number(process.env.TEST_TIMES) || 10;
    lines.push(`Slowest files (of ${done.length}):`);
    for (const s of done.sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, count)) {
      lines.push(`${seconds(s.end - s.start)}  ${s.file} (${s.project})`);
    }
    console.log(`\n${lines.join('\n')}`);
  }
}
