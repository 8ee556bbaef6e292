/**
 * The reference page's own script (`DOCS_BOOTSTRAP`), run as the browser runs it: the `curl`
 * samples and examples it hands to Redoc name the origin that served the page, not the local
 * stack's default address, so a sample copied from any stage or port calls that server.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DOCS_BOOTSTRAP, renderDocsPage } from '../../lib/openapi/docs-page.ts';
import { openApiDocument } from '../../lib/openapi/document.ts';
import { LOCAL_BASE_URL } from '../../lib/operations/examples.ts';

/** The spec Redoc is given on a page served at `pageUrl`. */
function specShownAt(pageUrl: string): string {
  const html = renderDocsPage(openApiDocument);
  const embedded = /<script type="application\/json" id="openapi-document">([\s\S]*?)<\/script>/.exec(
    html,
  )?.[1];
  if (!embedded) throw new Error('no embedded document');
  expect(html).toContain(`<script>${DOCS_BOOTSTRAP}</script>`);
  let shown: unknown;
  runInNewContext(DOCS_BOOTSTRAP, {
    URL,
    JSON,
    location: new URL(pageUrl),
    document: {
      getElementById: (id: string) => (id === 'openapi-document' ? { textContent: embedded } : {}),
    },
    Redoc: { init: (spec: unknown) => (shown = spec) },
  });
  return JSON.stringify(shown);
}

const curlSources = (spec: string) =>
  Object.values(
    JSON.parse(spec).paths as Record<string, Record<string, { 'x-codeSamples'?: Array<{ source: string }> }>>,
  )
    .flatMap((item) => Object.values(item))
    .flatMap((op) => op['x-codeSamples'] ?? [])
    .map((sample) => sample.source);

describe('the reference page', () => {
  it.each([
    ['a deployed stage on its custom domain', 'https://go.example.com/docs', 'https://go.example.com'],
    ['a local stack on another port', 'http://127.0.0.1:40123/docs#tag/Links', 'http://127.0.0.1:40123'],
  ])('on %s: every curl sample and example names the origin serving the page', (_, page, origin) => {
    expect(JSON.stringify(openApiDocument)).toContain(LOCAL_BASE_URL);
    const spec = specShownAt(page);
    expect(spec).not.toContain(LOCAL_BASE_URL);
    const samples = curlSources(spec);
    expect(samples.length).toBeGreaterThan(30);
    for (const source of samples)
      expect(source).toMatch(new RegExp(`^curl [^']*'${origin.replace(/[.]/g, '\\.')}/`));
    expect(spec).toContain(`"share_url":"${origin}/r/`);
  });
});
