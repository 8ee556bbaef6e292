/**
 * The README and the pages of docs/ link to each other, to files of the repository and to images
 * by relative paths and `#anchors`. A page moved or a heading renamed breaks them silently on the
 * code host, so every relative link must name a file that exists, and every anchor a heading of
 * its page as the code host makes its id (GitHub's slug). The README stays short: the rest is in
 * docs/.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, marked, type Token } from 'marked';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Files a page may link to before they exist, by path from the repository's root: none. */
const ALLOWED_MISSING = new Set<string>();

const README_MAX_LINES = 300;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const decodeEntities = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#')) {
      const code =
        name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return String.fromCodePoint(code);
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });

/** A heading's text as the code host renders it: no backticks, emphasis markers or HTML tags. */
function plainText(tokens: Token[] | undefined): string {
  return (tokens ?? [])
    .map((token) => {
      switch (token.type) {
        case 'html':
        case 'image':
        case 'br':
          return '';
        case 'codespan':
        case 'escape':
          return token.text as string;
        case 'text':
          return token.tokens ? plainText(token.tokens) : decodeEntities(token.text);
        default:
          return 'tokens' in token ? plainText(token.tokens) : '';
      }
    })
    .join('');
}

interface Page {
  /** Every id a link may point at: the headings' slugs, in order, and HTML `id`/`name` attributes. */
  anchors: Set<string>;
  /** Link and image targets, as written (`href`, `src`). */
  targets: string[];
}

function parsePage(markdown: string): Page {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const targets: string[] = [];
  marked.walkTokens(Lexer.lex(markdown), (token) => {
    if (token.type === 'heading') anchors.add(slugger.slug(plainText(token.tokens)));
    else if (token.type === 'link' || token.type === 'image') targets.push(token.href);
    else if (token.type === 'html') {
      for (const m of token.text.matchAll(/\s(?:href|src)\s*=\s*"([^"]*)"/gi)) targets.push(m[1]!);
      for (const m of token.text.matchAll(/\s(?:id|name)\s*=\s*"([^"]*)"/gi)) anchors.add(m[1]!);
    }
  });
  return { anchors, targets };
}

/** Absolute URLs (`https:`, `mailto:`, `//host`) are not this test's business. */
const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/**
 * Every relative link of the given Markdown files (paths from `base`) that does not resolve:
 * `file: target (reason)`.
 */
function brokenLinks(base: string, files: string[], allowedMissing: ReadonlySet<string>): string[] {
  const pages = new Map<string, Page>();
  const pageAt = (file: string) => {
    let page = pages.get(file);
    if (!page) {
      page = parsePage(readFileSync(join(base, file), 'utf8'));
      pages.set(file, page);
    }
    return page;
  };
  const problems: string[] = [];
  for (const file of files) {
    for (const target of pageAt(file).targets) {
      if (isExternal(target)) continue;
      const hash = target.indexOf('#');
      const path = decodeURI(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const resolved =
        path === ''
          ? file
          : relative(base, path.startsWith('/') ? join(base, path) : join(base, dirname(file), path));
      if (resolved.startsWith('..')) {
        problems.push(`${file}: ${target} (outside the repository)`);
        continue;
      }
      if (!existsSync(join(base, resolved))) {
        if (!allowedMissing.has(resolved)) problems.push(`${file}: ${target} (no file ${resolved})`);
        continue;
      }
      if (anchor === undefined || !resolved.endsWith('.md')) continue;
      if (!pageAt(resolved).anchors.has(anchor))
        problems.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
    }
  }
  return problems;
}

const docsPages = () =>
  readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name))
    .sort();

describe('heading anchors', () => {
  const slugs = (headings: string[]) => [...parsePage(headings.map((h) => `## ${h}\n`).join('\n')).anchors];

  it("are GitHub's slugs of the heading's text", () => {
    expect(
      slugs([
        'Retries: `Idempotency-Key` and 503',
        '`sam local invoke`',
        'Settings (CDK context)',
        'Isolation: the delivery lanes',
        "The tests' support layer",
        'The layers of `lib`',
        '*Exactly* once, **not** _twice_',
        'snake_case and kebab-case stay',
        'Dates &amp; times <code>x</code> [linked](other.md)',
        'Déjà vu',
      ]),
    ).toEqual([
      'retries-idempotency-key-and-503',
      'sam-local-invoke',
      'settings-cdk-context',
      'isolation-the-delivery-lanes',
      'the-tests-support-layer',
      'the-layers-of-lib',
      'exactly-once-not-twice',
      'snake_case-and-kebab-case-stay',
      'dates--times-x-linked',
      'déjà-vu',
    ]);
  });

  it('number repeated headings -1, -2 in their page, and ignore lines in code blocks', () => {
    const page = parsePage('# Settings\n\n## Settings\n\n```sh\n# Settings\n```\n\n### Settings\n');
    expect([...page.anchors]).toEqual(['settings', 'settings-1', 'settings-2']);
  });
});

describe('the link check', () => {
  const base = mkdtempSync(join(tmpdir(), 'doc-links-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  mkdirSync(join(base, 'docs'));
  writeFileSync(join(base, 'docs', 'shot.png'), '');
  writeFileSync(
    join(base, 'docs', 'guide.md'),
    '# Guide\n\n## Errors: `429`\n\nBack to [the start](../README.md#start).\n',
  );
  writeFileSync(
    join(base, 'README.md'),
    [
      '# Start',
      '',
      '[ok](docs/guide.md#errors-429) [ok](#start) ![ok](docs/shot.png) [ok](https://example.com/x.md)',
      '[ok while missing](docs/later.md#anything)',
      '[gone](docs/nowhere.md) [no heading](docs/guide.md#errors) [no image](docs/missing.png)',
      '[not here](#nowhere) [escapes](../outside.md)',
      '',
      '```md',
      '[in a code block, not a link](docs/nowhere.md)',
      '```',
      '',
    ].join('\n'),
  );

  it('reports every broken file, image and anchor, and nothing else', () => {
    expect(brokenLinks(base, ['README.md', 'docs/guide.md'], new Set(['docs/later.md']))).toEqual([
      'README.md: docs/nowhere.md (no file docs/nowhere.md)',
      'README.md: docs/guide.md#errors (no heading #errors in docs/guide.md)',
      'README.md: docs/missing.png (no file docs/missing.png)',
      'README.md: #nowhere (no heading #nowhere in README.md)',
      'README.md: ../outside.md (outside the repository)',
    ]);
  });

  it('allows a missing file only where it is named', () => {
    expect(brokenLinks(base, ['README.md'], new Set())).toContain(
      'README.md: docs/later.md#anything (no file docs/later.md)',
    );
  });
});

describe('README.md and docs/', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');

  it('resolve every relative link and anchor', () => {
    const files = ['README.md', ...docsPages()];
    expect(files.length).toBeGreaterThan(5);
    expect(brokenLinks(root, files, ALLOWED_MISSING)).toEqual([]);
  });

  it(`keep the README within ${README_MAX_LINES} lines`, () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('list every page of docs/ in the README', () => {
    const linked = new Set(
      parsePage(readme)
        .targets.filter((t) => !isExternal(t))
        .map((t) => t.split('#')[0]),
    );
    expect(docsPages().filter((page) => !linked.has(page))).toEqual([]);
  });
});
