/**
 * The layers of `lib` import one way: `domain` (pure rules and types) imports no other layer;
 * `db` (the table: entity modules and their operations) imports `domain` only; `webhooks` (the
 * pipeline) may import `db` and `domain`, never the reverse. And the environment is read in one
 * place, `lib/config.ts`. Read from the source text, so a new back-edge fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

/** The project files a file imports (static and dynamic, `export … from` included). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => m[1]!);
  return specifiers.map((s) => relative(root, resolve(root, dirname(file), s)));
}

/** `lib/<layer>/…` → `<layer>`; files directly in lib are their own layer (`config.ts`, …). */
const layerOf = (file: string) => file.split('/')[1]!;

function edges(layer: string): Array<[string, string]> {
  return sources(`lib/${layer}`).flatMap((file) =>
    importsOf(file).map((target): [string, string] => [file, target]),
  );
}

describe('layering of lib', () => {
  it('domain imports no other layer', () => {
    const out = edges('domain').filter(([, target]) => !target.startsWith('lib/domain/'));
    expect(out).toEqual([]);
  });

  it('db imports domain, the table definition, config and the AWS clients, never webhooks or http', () => {
    const allowed = ['domain', 'db', 'aws', 'config.ts', 'table-definition.ts'];
    const out = edges('db').filter(([, target]) => !allowed.includes(layerOf(target)));
    expect(out).toEqual([]);
  });

  it('webhooks may import db; db and webhooks do not import each other both ways', () => {
    const back = edges('db').filter(([, target]) => target.startsWith('lib/webhooks/'));
    expect(back).toEqual([]);
  });

  it('the environment is read only by lib/config.ts (the local stack, which sets it, aside)', () => {
    const layers = readdirSync(join(root, 'lib'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== 'local')
      .map((e) => e.name);
    expect(layers).toEqual(expect.arrayContaining(['domain', 'db', 'webhooks', 'http', 'observability']));
    const files = [
      ...layers.flatMap((layer) => sources(`lib/${layer}`)),
      ...readdirSync(join(root, 'lib'))
        .filter((f) => f.endsWith('.ts') && f !== 'config.ts')
        .map((f) => `lib/${f}`),
      ...sources('functions'),
    ];
    const readers = files.filter((f) => /process\.env/.test(readFileSync(join(root, f), 'utf8')));
    expect(readers).toEqual([]);
  });
});

describe('tooling', () => {
  it('the bench, the scripts, the dashboard and tools/ import nothing from test/; tools/ no vitest', () => {
    const files = ['scripts', 'dashboard', 'tools'].flatMap((dir) => sources(dir));
    const fromTest = files.flatMap((file) =>
      importsOf(file)
        .filter((t) => t.startsWith('test/'))
        .map((t) => [file, t]),
    );
    const vitest = sources('tools').filter((f) => /from 'vitest'/.test(readFileSync(join(root, f), 'utf8')));
    expect([...fromTest, ...vitest]).toEqual([]);
  });
});
