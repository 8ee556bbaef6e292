/**
 * What every page shares: routes, the error note with the API's own message, the focused heading,
 * times (relative, then local beside UTC), a form's submit, the copy button, share URLs, tables
 * that say when they scroll, the names of the counts, and cursor paging.
 */
import { html } from 'htm/preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Link, page } from './api.ts';
import { ago, exactUtc, localAndUtc, toDate } from './format.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const go = (hash: string) => {
  window.location.hash = hash;
};

/** An input's or select's value, from its event. */
export const inputValue = (e: Event) => (e.target as HTMLInputElement).value;

/** The message to show for a failure: the API's own where it gave one. */
export const messageOf = (error: unknown) =>
  error instanceof ApiError ? error.message : 'Something went wrong. Reload the page and retry.';

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${messageOf(error)}</p>`;
}

/** The page's heading takes focus on each route change, so keyboard and screen reader users land on it. */
export function Heading({ children }: { children: unknown }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}

/**
 * A time as "3 hours ago", then the browser's local time beside UTC ("Nov 22, 09:05 local ·
 * Nov 22, 14:05 UTC"): the team reads its own clock, the API and the logs speak UTC. The exact
 * UTC second on hover, and `datetime` for machines.
 */
export function Time({ stamp }: { stamp: string }) {
  const date = toDate(stamp);
  const { local, utc } = localAndUtc(stamp);
  return html`<time class="when" datetime=${Number.isNaN(date.getTime()) ? undefined : date.toISOString()}
    title=${exactUtc(stamp)}><span class="ago">${ago(stamp)}</span>${' '}<span class="clock"
      ><span class="local">${local} local</span>${' · '}<span class="utc">${utc} UTC</span></span></time>`;
}

/** The URL a referrer shares: the API's `share_url` when it sends one, else this stack's `/r/{code}`. */
export const shareUrlOf = (link: Pick<Link, 'referral_code' | 'share_url'>) =>
  link.share_url ?? new URL(`r/${encodeURIComponent(link.referral_code)}`, document.baseURI).href;

/**
 * A share URL that may wrap after a `/` of its address but never inside the code, which a reader
 * copies or types by eye: the code is one unbreakable piece (`.code`).
 */
export function ShareUrl({ url, code }: { url: string; code: string }) {
  const at = url.lastIndexOf(code);
  const head = at >= 0 ? url.slice(0, at) : url;
  const tail = at >= 0 ? url.slice(at) : '';
  const parts = head.split(/(?<=\/)/);
  return html`<code class="share">${parts.map((p, i) => html`<span key=${i}>${p}</span><wbr />`)}<span class="code"
    >${tail}</span></code>`;
}

/**
 * A table's box: a sideways scroll when the table is wider than the page, and then a visible cue
 * saying so (re-checked after every render and on every resize), so no column hides unannounced.
 * The box is focusable, so the keyboard can scroll it too.
 */
export function ScrollBox({ label, children }: { label: string; children: unknown }) {
  const ref = useRef<HTMLDivElement>(null);
  const [wide, setWide] = useState(false);
  const check = () => {
    const box = ref.current;
    if (box) setWide(box.scrollWidth > box.clientWidth + 1);
  };
  useEffect(check);
  useEffect(() => {
    const box = ref.current;
    if (!box || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(check);
    observer.observe(box);
    if (box.firstElementChild) observer.observe(box.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return html`<div class=${wide ? 'scroll-box is-wide' : 'scroll-box'}>
    ${wide ? html`<p class="scroll-cue">More columns: scroll the table sideways →</p>` : null}
    <div class="scroll" ref=${ref} tabindex="0" role="region" aria-label=${label}>${children}</div>
  </div>`;
}

/**
 * What the counts are called, everywhere on the dashboard, and what they count. "Clicks" keeps
 * the API's `total_clicks` (the seed's name): every action on a link, visits included, so it is
 * at least the visits.
 */
export const NAMES = {
  visits: 'Visits',
  unique_visits: 'Unique visits',
  referred_users: 'Signups',
  actions: 'Actions',
  clicks: 'Clicks',
} as const;

export function Glossary() {
  return html`<details class="glossary"><summary>What the counts mean</summary>
    <dl class="facts">
      <dt>${NAMES.visits}</dt><dd>People who followed a share URL (<code>/r/CODE</code>); bots and link previews are not counted.</dd>
      <dt>${NAMES.unique_visits}</dt><dd>Visits by a visitor who had not visited the same link in the hour before.</dd>
      <dt>${NAMES.referred_users}</dt><dd>Referred users: sign-ups your app recorded through a link (the API's <code>total_referrals</code>).</dd>
      <dt>${NAMES.actions}</dt><dd>Actions your app recorded (a purchase, a share…), visits not included.</dd>
      <dt>Revenue</dt><dd>Sales your app recorded (<code>POST /api/v1/conversion</code>) net of their refunds, in the campaign's currency; a refund counts on its own day.</dd>
      <dt>${NAMES.clicks}</dt><dd>Everything recorded on a link: its visits plus its actions (the API's <code>total_clicks</code>).</dd>
    </dl></details>`;
}

/**
 * A form's submit: one run at a time (`busy`), and a failure kept to be shown with the API's own
 * message (`error`, cleared when the form is sent again).
 */
export function useSubmit(action: () => Promise<void>) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e?: Event) => {
    e?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 2000);
    } catch {
      window.prompt('Copy:', text);
    }
  };
  return html`<button type="button" class="small" onClick=${copy}>
    ${done ? 'Copied' : 'Copy'}<span class="visually-hidden">${` ${label}`}</span>
  </button><span class="visually-hidden" aria-live="polite">${done ? 'Copied' : ''}</span>`;
}

/** "Loading…", then the error, an empty state or the content. */
export function Loaded<T>({
  data,
  error,
  empty,
  children,
}: {
  data: T[] | null;
  error: unknown;
  empty: unknown;
  children: (items: T[]) => unknown;
}) {
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (data === null) return html`<p>Loading…</p>`;
  return data.length === 0 ? html`<p class="empty">${empty}</p>` : children(data);
}

/**
 * One page of a list at a time, with Previous and Next: the cursors of the pages seen are kept
 * (`cursors[i]` fetches page i). A new `query` starts again from the first page.
 */
export function useCursorPages<T>(path: string, query: Record<string, string | number | undefined>) {
  const key = `${path}?${JSON.stringify(query)}`;
  const [position, setPosition] = useState({
    key,
    cursors: [undefined] as Array<string | undefined>,
    index: 0,
  });
  const at = position.key === key ? position : { key, cursors: [undefined], index: 0 };
  const [rows, setRows] = useState<T[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const cursor = at.cursors[at.index];
  const load = useCallback(async () => {
    try {
      const result = await page<T>(path, { ...query, cursor });
      setRows(result.items);
      setNext(result.next);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  }, [key, cursor]);
  useEffect(() => {
    load();
  }, [load]);
  const pager = (label: string) => html`<nav class="pager" aria-label=${label}>
    <button type="button" disabled=${at.index === 0}
      onClick=${() => setPosition({ ...at, index: at.index - 1 })}>Previous page</button>
    <span>Page ${at.index + 1}</span>
    <button type="button" disabled=${!next} onClick=${() =>
      next &&
      setPosition({ key, cursors: [...at.cursors.slice(0, at.index + 1), next], index: at.index + 1 })}
      >Next page</button>
  </nav>`;
  return { rows, error, index: at.index, load, pager };
}
