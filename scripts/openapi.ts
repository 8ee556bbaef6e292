/**
 * `npm run openapi:types` / `openapi:lint` / `openapi:write -- <file>`: regenerate the committed client
 * types (`--check` only compares), lint the document, or write it out.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { openApiDocument } from '../lib/openapi/document.ts';
import { generateTypes, lintDocument, projectRoot, TYPES_FILE } from './openapi-tools.ts';

const [command, ...args] = process.argv.slice(2);
const check = args.includes('--check');

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function update(file: string, content: string): void {
  const name = relative(projectRoot, file);
  if (readOrEmpty(file) === content) {
    console.log(`${name} is up to date.`);
    return;
  }
  if (check) {
    console.error(`${name} is out of date: run \`npm run openapi:${command}\`.`);
    process.exit(1);
  }
  writeFileSync(file, content);
  console.log(`Wrote ${name}.`);
}

switch (command) {
  case 'types':
    update(TYPES_FILE, await generateTypes());
    break;
  case 'lint': {
    const { ok, output } = lintDocument();
    console.log(output);
    process.exit(ok ? 0 : 1);
    break;
  }
  case 'write': {
    const file = args.find((a) => !a.startsWith('--'));
    const json = JSON.stringify(openApiDocument, null, 2);
    if (file) writeFileSync(file, `${json}\n`);
    else console.log(json);
    break;
  }
  default:
    console.error('usage: tsx scripts/openapi.ts types [--check] | lint | write [file]');
    process.exit(2);
}
