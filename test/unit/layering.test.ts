/**
 * The layers of `lib` import one way, floor by floor (`FLOORS`): `domain` (pure rules and types)
 * imports no other layer; `db` (the table: entities, plumbing, migrations and the repository
 * modules) imports `domain`, the table definition, config and the AWS clients only; `webhooks`
 * (the pipeline) may import `db` and `domain`, never the reverse. No file of the project imports itself through others. And the environment is read in
 * one place, `lib/config.ts`. Read from the source text, so a new back-edge or cycle fails here.
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

/** Where the project's own TypeScript lives: every file here is a node of the import graph. */
const PROJECT_DIRS = ['lib', 'functions', 'infra', 'scripts', 'tools', 'test', 'dashboard'];

/** Each file of `files` with the project files it imports (imports of files outside `files` left out). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  return new Map(files.map((file) => [file, importsOf(file).filter((target) => known.has(target))]));
}

/**
 * The graph's file cycles: each strongly connected component of more than one file, or a file
 * importing itself, its files sorted (Tarjan's algorithm, one pass over the edges).
 */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

function edges(layer: string): Array<[string, string]> {
  return sources(`lib/${layer}`).flatMap((file) =>
    importsOf(file).map((target): [string, string] => [file, target]),
  );
}

describe('no file cycles', () => {
  it('finds the cycles of a made-up graph, and none where there are none', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
      ['f', ['d', 'g']],
      ['g', ['f']],
    ]);
    expect(cyclesOf(graph)).toEqual(expect.arrayContaining([['a', 'b', 'c'], ['e'], ['f', 'g']]));
    expect(cyclesOf(graph)).toHaveLength(3);
    const diamond = new Map([
      ['top', ['left', 'right']],
      ['left', ['bottom']],
      ['right', ['bottom']],
      ['bottom', []],
    ]);
    expect(cyclesOf(diamond)).toEqual([]);
  });

  it('no project file imports itself through others (lib, functions, infra, scripts, tools, test, dashboard)', () => {
    const graph = importGraph(PROJECT_DIRS.flatMap((dir) => sources(dir)));
    expect(graph.size).toBeGreaterThan(300);
    expect(cyclesOf(graph)).toEqual([]);
  });
});

/**
 * The layers of `lib` by floor, the ground first: a file imports its own layer and the floors
 * below, never its own floor's other layers or a floor above. A new layer has to be placed here.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['domain', 'config.ts', 'table-definition.ts', 'queues'],
  ['aws', 'observability', 'validation', 'routes.ts'],
  ['db', 'operations', 'throttling.ts'],
  ['http', 'stream'],
  ['dashboard', 'openapi', 'webhooks'],
  ['analytics', 'local'],
];
const floorOf = new Map(FLOORS.flatMap((layers, floor) => layers.map((layer) => [layer, floor] as const)));

describe('layering of lib', () => {
  it('every layer of lib stands on a floor', () => {
    const layers = readdirSync(join(root, 'lib'), { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.name.endsWith('.ts'))
      .map((e) => e.name);
    expect(layers.filter((layer) => !floorOf.has(layer))).toEqual([]);
  });

  it('no layer imports a layer on its own floor or above (operations → openapi, dashboard → http were two)', () => {
    const files = sources('lib');
    const upward = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('lib/') && layerOf(target) !== layerOf(file))
        .filter((target) => floorOf.get(layerOf(target))! >= floorOf.get(layerOf(file))!)
        .map((target) => `${file} -> ${target}`),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(upward).toEqual([]);
  });

  it('domain imports no other layer', () => {
    const out = edges('domain').filter(([, target]) => !target.startsWith('lib/domain/'));
    expect(out).toEqual([]);
  });

  it('db imports domain, the table definition, config and the AWS clients, never webhooks or http', () => {
    const allowed = ['domain', 'db', 'aws', 'config.ts', 'table-definition.ts'];
    const out = edges('db').filter(([, target]) => !allowed.includes(layerOf(target)));
    expect(out).toEqual([]);
  });

  it('db in parts: entities/ and table/ stand alone, migrations/ and the repositories on both', () => {
    const partOf = (file: string) =>
      /^lib\/db\/(entities|table|migrations)\//.exec(file)?.[1] ?? 'repositories';
    const mayImport: Record<string, string[]> = {
      entities: ['entities'],
      table: ['table'],
      migrations: ['migrations', 'entities', 'table'],
      repositories: ['repositories', 'entities', 'table'],
    };
    const out = edges('db')
      .filter(([, target]) => target.startsWith('lib/db/'))
      .filter(([file, target]) => !mayImport[partOf(file)]!.includes(partOf(target)));
    expect(sources('lib/db/table').length).toBeGreaterThan(3);
    expect(sources('lib/db/migrations').length).toBeGreaterThan(3);
    expect(out).toEqual([]);
  });

  it('the table is read and written through lib/db alone: no DynamoDB command is made elsewhere', () => {
    const own = ['lib/db/', 'lib/aws/', 'lib/local/'];
    const files = [...sources('lib'), ...sources('functions')].filter(
      (f) => !own.some((o) => f.startsWith(o)),
    );
    const commands = files.filter((file) =>
      /^import (?!type )[^;]*from '@aws-sdk\/(lib-dynamodb|client-dynamodb)'/m.test(
        readFileSync(join(root, file), 'utf8'),
      ),
    );
    expect(files.length).toBeGreaterThan(80);
    expect(commands).toEqual([]);
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
