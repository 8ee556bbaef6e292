/**
 * What every page shares: routes, the error note with the API's own message, the focused heading,
 * times with their exact UTC value on hover, a form's submit, the copy button and cursor paging.
 */
import { html } from 'htm/preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, page } from './api.ts';
import { ago, exactUtc, toDate } from './format.ts';

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

/** A time as "3 hours ago", the exact UTC time on hover (and for machines, `datetime`). */
export function Time({ stamp }: { stamp: string }) {
  const date = toDate(stamp);
  return html`<time datetime=${Number.isNaN(date.getTime()) ? undefined : date.toISOString()} title=${exactUtc(stamp)}
    >${ago(stamp)}</time
  >`;
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
