/**
 * The browser JavaScript of docs/click-ids.md, taken from the page itself (the code block after
 * `<!-- click-id-snippet -->`) and run against a fake `document` and `location`: what a business
 * copies is what is tested.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const page = readFileSync(new URL('../../docs/click-ids.md', import.meta.url), 'utf8');
const snippet = /<!-- click-id-snippet -->\s*```js\n([\s\S]*?)```/.exec(page)?.[1];

/** A cookie jar as `document.cookie` behaves: each write sets one cookie, a read lists them all. */
class FakeDocument {
  readonly writes: string[] = [];
  private readonly jar = new Map<string, string>();
  constructor(initial: Record<string, string> = {}) {
    for (const [name, value] of Object.entries(initial)) this.jar.set(name, value);
  }
  get cookie(): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
  }
  set cookie(written: string) {
    this.writes.push(written);
    const [pair = ''] = written.split(';');
    const at = pair.indexOf('=');
    this.jar.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
  }
}

/** Load the snippet as a page would, on `search`, and hand back its two functions. */
function load(search: string, document: FakeDocument) {
  if (!snippet) throw new Error('no <!-- click-id-snippet --> js block in docs/click-ids.md');
  const run = new Function('document', 'location', `${snippet}\nreturn { keepClickId, storedClickId };`);
  return run(document, { search }) as {
    keepClickId: (options?: { windowDays?: number; firstClick?: boolean }) => void;
    storedClickId: () => string | null;
  };
}

const ID = 'AT8MW34qTUwbmo5tX048KxoAAAAAABWam3Vq9TzR1xYb0Kc7LwJp2ks3VFg0TTJR';

describe('the click-id snippet of docs/click-ids.md', () => {
  it('keeps rfclid of the landing URL in a first-party cookie for the window', () => {
    const document = new FakeDocument({ session: 'abc' });
    const { storedClickId } = load(`?rfa=K7TX4M2Q&rfclid=${ID}`, document);
    expect(document.writes).toEqual([`rfclid=${ID}; Max-Age=7776000; Path=/; SameSite=Lax; Secure`]);
    expect(storedClickId()).toBe(ID);
  });

  it('sets nothing without rfclid, and gives null at signup when the cookie is gone', () => {
    const document = new FakeDocument({ session: 'abc' });
    const { storedClickId } = load('?rfa=K7TX4M2Q', document);
    expect(document.writes).toEqual([]);
    expect(storedClickId()).toBeNull();
  });

  it('keeps the newest click by default (last click)', () => {
    const document = new FakeDocument({ rfclid: 'older-click' });
    const { storedClickId } = load(`?rfclid=${ID}`, document);
    expect(storedClickId()).toBe(ID);
  });

  it('with firstClick, an id already kept stays', () => {
    const document = new FakeDocument({ rfclid: 'older-click' });
    const search = { search: `?rfclid=${ID}` };
    const run = new Function(
      'document',
      'location',
      `${snippet!.replace('keepClickId({ windowDays: 90 });', 'keepClickId({ windowDays: 30, firstClick: true });')}\nreturn storedClickId;`,
    );
    const storedClickId = run(document, search) as () => string | null;
    expect(document.writes).toEqual([]);
    expect(storedClickId()).toBe('older-click');
    const fresh = new FakeDocument();
    expect((run(fresh, search) as () => string | null)()).toBe(ID);
    expect(fresh.writes).toEqual([`rfclid=${ID}; Max-Age=2592000; Path=/; SameSite=Lax; Secure`]);
  });

  it('refuses anything that is not a click id: no cookie attribute can be injected', () => {
    for (const bad of ['x; Domain=evil.example', 'a b', '<script>', 'ü']) {
      const document = new FakeDocument();
      load(`?rfclid=${encodeURIComponent(bad)}`, document);
      expect(document.writes, bad).toEqual([]);
    }
  });
});
