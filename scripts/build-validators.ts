/**
 * Writes `lib/operations/compiled.ts`: for every operation of `lib/operations/definitions.ts`, its
 * request validators as standalone code (TypeBox's `TypeCompiler.Code`, run here at build time) and its
 * request rules as data, which is all `httpHandler` needs at run time. The functions so ship neither
 * TypeBox's compiler nor its schemas (91 KiB of every bundle before).
 *
 * `npm run validators:build` runs it; `test/unit/validators.test.ts` regenerates the file and fails
 * when the committed one differs, so a schema changed without regenerating fails CI.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TObject } from '@sinclair/typebox';
import type { OperationDefinition, RuleError } from '../lib/operations/definition.ts';
import { operations } from '../lib/operations/definitions.ts';
import { type RouteDefinition, routes } from '../lib/routes.ts';
import { generateCheck } from '../lib/validation/generate.ts';

const projectRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const COMPILED_FILE = join(projectRoot, 'lib', 'operations', 'compiled.ts');

const indent = (text: string, by: string) =>
  text
    .split('\n')
    .map((line) => (line ? by + line : line))
    .join('\n');

/**
 * `validator(check, schema)` for one schema, as an expression a bundler may drop when unused, or
 * with a fixed error, `refusing(check, error)`, which needs no description of what failed.
 */
function validatorSource(schema: TObject, at: string, fixedError?: RuleError): string {
  const { body, rules, node } = generateCheck(schema, at, 'typescript');
  // A schema without custom kinds gets no `kind` hook: its check then needs nothing of kind-rules.ts.
  const check = rules.length
    ? [
        '/* @__PURE__ */ ((kind: KindHook) => {',
        indent(body, '  '),
        `})(/* @__PURE__ */ kindHook(${JSON.stringify(rules)}))`,
      ]
    : ['/* @__PURE__ */ (() => {', indent(body, '  '), '})()'];
  return [
    fixedError ? '/* @__PURE__ */ refusing(' : '/* @__PURE__ */ validator(',
    ...indent(check.join('\n'), '  ')
      .split('\n')
      .map((line, i, all) => (i === all.length - 1 ? `${line},` : line)),
    `  ${JSON.stringify(fixedError ?? node)},`,
    ')',
  ].join('\n');
}

function operationSource(route: RouteDefinition, def: OperationDefinition): string {
  const request = def.request ?? {};
  const parts: string[] = [`name: ${JSON.stringify(route.name)},`, `auth: ${route.auth},`];
  if (request.body) {
    parts.push(
      [
        'body: {',
        `  validate: ${indent(validatorSource(request.body, `${route.name}.body`), '  ').trimStart()},`,
        `  optional: ${request.bodyOptional === true},`,
        `  refused: ${JSON.stringify(request.refusedFields ?? {})},`,
        ...(request.bodyExactlyOne ? [`  exactlyOne: ${JSON.stringify(request.bodyExactlyOne)},`] : []),
        '},',
      ].join('\n'),
    );
  } else if (request.bodyOptional || request.refusedFields || request.bodyExactlyOne) {
    throw new Error(`${route.name}: body rules without a body schema`);
  }
  if (request.query) {
    parts.push(
      [
        'query: {',
        `  validate: ${indent(validatorSource(request.query, `${route.name}.query`), '  ').trimStart()},`,
        `  required: ${JSON.stringify(request.query.required ?? [])},`,
        ...(request.queryAtLeastOne ? [`  atLeastOne: ${JSON.stringify(request.queryAtLeastOne)},`] : []),
        '},',
      ].join('\n'),
    );
  } else if (request.queryAtLeastOne) {
    throw new Error(`${route.name}: queryAtLeastOne without a query schema`);
  }
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  const declared = Object.keys(request.path?.properties ?? {});
  if (names.join() !== declared.join()) {
    throw new Error(`${route.name}: path parameters ${names} but the definition declares ${declared}`);
  }
  if (request.path) {
    parts.push(
      [
        'path: {',
        `  validate: ${indent(validatorSource(request.path, `${route.name}.path`, request.pathNotFound), '  ').trimStart()},`,
        '},',
      ].join('\n'),
    );
  }
  return [
    `/** ${route.method} ${route.path}: ${route.summary}. */`,
    `export const ${route.name}: CompiledOperationOf<typeof operations.${route.name}> = {`,
    indent(parts.join('\n'), '  '),
    '};',
  ].join('\n');
}

/** The whole module, as it must be committed. */
export function generateCompiledModule(): string {
  const defs = operations as Readonly<Record<string, OperationDefinition>>;
  const names = new Set(routes.map((r) => r.name));
  for (const name of Object.keys(defs)) {
    if (!names.has(name)) throw new Error(`operation ${name} has no row in lib/routes.ts`);
  }
  const blocks = routes.map((route) => {
    const def = defs[route.name];
    if (!def) throw new Error(`Route ${route.name} has no operation in lib/operations/definitions.ts`);
    return operationSource(route, def);
  });
  return [
    '// Generated by scripts/build-validators.ts (`npm run validators:build`) from',
    '// lib/operations/definitions.ts and lib/routes.ts. Do not edit: test/unit/validators.test.ts',
    '// fails when this file is not what the generator writes.',
    "import { refusing } from '../validation/refusing.ts';",
    "import { type KindHook, kindHook, validator } from '../validation/validator.ts';",
    "import type { operations } from './definitions.ts';",
    "import type { CompiledOperationOf } from './runtime.ts';",
    '',
    blocks.join('\n\n'),
    '',
  ].join('\n');
}

/** Whether the committed file is what the generator writes now. */
export function compiledModuleIsCurrent(): boolean {
  return readFileSync(COMPILED_FILE, 'utf8') === generateCompiledModule();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(COMPILED_FILE, generateCompiledModule());
  console.log(`wrote ${COMPILED_FILE}`);
}
