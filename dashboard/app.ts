/**
 * The dashboard: sign in with an api key, campaigns, a campaign's overview (chart and leaderboard)
 * and its links. Routes live in the URL's fragment (`#/campaigns/<id>/links`), so one page serves
 * them all; the api key never appears there (`api.ts`).
 */
import { html } from 'htm/preact';
import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  type Campaign,
  get,
  type Link,
  page,
  post,
  type Series,
  session,
  type TopEntry,
} from './api.ts';
import { Chart } from './chart.ts';
import { ago, count, exactUtc, toStamp } from './format.ts';

type Route = { name: 'campaigns' } | { name: 'overview'; id: string } | { name: 'links'; id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parseRoute(hash: string): Route {
  const m = /^#\/campaigns\/([^/]+)(\/links)?$/.exec(hash);
  if (m?.[1] && UUID.test(m[1])) return m[2] ? { name: 'links', id: m[1] } : { name: 'overview', id: m[1] };
  return { name: 'campaigns' };
}

const go = (hash: string) => {
  window.location.hash = hash;
};

/** The message to show for a failure: the API's own where it gave one. */
const messageOf = (error: unknown) =>
  error instanceof ApiError ? error.message : 'Something went wrong. Reload the page and retry.';

function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${messageOf(error)}</p>`;
}

/** The page's heading takes focus on each route change, so keyboard and screen reader users land on it. */
function Heading({ children }: { children: unknown }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}

function Time({ stamp }: { stamp: string }) {
  return html`<time datetime=${stamp.replace('_', 'T').replace(/-(\d\d)-(\d\d)$/, ':$1:$2')}Z title=${exactUtc(stamp)}
    >${ago(stamp)}</time
  >`;
}

/**
 * A form's submit: one run at a time (`busy`), and a failure kept to be shown with the API's own
 * message (`error`, cleared when the form is sent again).
 */
function useSubmit(action: () => Promise<void>) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
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

// --- Sign in -----------------------------------------------------------------------------------

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    session.signIn(key.trim());
    try {
      // Any keyed read tells a good key from a bad one; readiness costs one table read.
      await get('health/ready');
    } catch (failure) {
      session.signOut();
      throw failure;
    }
    onSignedIn();
  });
  return html`<main id="main" class="narrow">
    <${Heading}>Sign in<//>
    <p>Paste an api key of your account. It is kept in this tab only and forgotten when you close it.</p>
    <form onSubmit=${submit}>
      <label for="api-key">API key</label>
      <input
        id="api-key"
        type="password"
        autocomplete="off"
        spellcheck="false"
        required
        value=${key}
        onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)}
      />
      <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
    <${ErrorNote} error=${error} />
    <p class="hint">No key yet? Create one with <code>npm run api-key -- create</code>.</p>
  </main>`;
}

// --- Campaigns ---------------------------------------------------------------------------------

function CreateCampaign() {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    const campaign = await post<Campaign>('campaign', { name: name.trim(), url: url.trim() });
    go(`#/campaigns/${campaign.id}`);
  });
  return html`<section aria-labelledby="create-title" class="card">
    <h2 id="create-title">Create a campaign</h2>
    <form onSubmit=${submit} class="grid-form">
      <label for="campaign-name">Name</label>
      <input id="campaign-name" required maxlength="256" value=${name}
        onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} />
      <label for="campaign-url">Landing page URL</label>
      <input id="campaign-url" required maxlength="2048" placeholder="https://example.com/signup" value=${url}
        onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create campaign'}</button>
    </form>
    <${ErrorNote} error=${error} />
  </section>`;
}

function OpenCampaign() {
  const [id, setId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const value = id.trim();
    if (!UUID.test(value)) {
      setError(
        new ApiError(
          400,
          'validation_failed',
          'A campaign id is a UUID, like 3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a.',
        ),
      );
      return;
    }
    try {
      const campaign = await get<Campaign>('campaign', { id: value });
      go(`#/campaigns/${campaign.id}`);
    } catch (failure) {
      setError(failure);
    }
  };
  return html`<section aria-labelledby="open-title" class="card">
    <h2 id="open-title">Open a campaign by id</h2>
    <form onSubmit=${submit} class="grid-form">
      <label for="campaign-id">Campaign id</label>
      <input id="campaign-id" required spellcheck="false" value=${id}
        onInput=${(e: Event) => setId((e.target as HTMLInputElement).value)} />
      <button type="submit">Open</button>
    </form>
    <${ErrorNote} error=${error} />
  </section>`;
}

/** The account's campaigns, newest first, 20 at a time (`GET /api/v1/campaigns`). */
function Campaigns() {
  const [list, setList] = useState<Campaign[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = useCallback((cursor?: string) => {
    setError(null);
    page<Campaign>('campaigns', { limit: 20, cursor })
      .then((p) => {
        setList((shown) => [...(cursor ? (shown ?? []) : []), ...p.items]);
        setNext(p.next);
      })
      .catch(setError);
  }, []);
  useEffect(() => load(), [load]);
  return html`<main id="main">
    <${Heading}>Campaigns<//>
    <section aria-labelledby="list-title" class="card">
      <h2 id="list-title">Your campaigns</h2>
      ${
        list === null
          ? error
            ? null
            : html`<p>Loading…</p>`
          : list.length === 0
            ? html`<p class="empty">No campaign yet. Create one below: its links, visits and signups will show here.</p>`
            : html`<ul class="campaign-list">
              ${list.map(
                (c) => html`<li key=${c.id}>
                  <a href="#/campaigns/${c.id}">${c.name}</a> <${Time} stamp=${c.created_at} />
                  <code class="id">${c.id}</code>
                </li>`,
              )}
            </ul>`
      }
      ${next && html`<button type="button" onClick=${() => load(next)}>Show more campaigns</button>`}
      <${ErrorNote} error=${error} />
    </section>
    <div class="two">
      <${CreateCampaign} />
      <${OpenCampaign} />
    </div>
  </main>`;
}

// --- A campaign --------------------------------------------------------------------------------

function useCampaign(id: string) {
  const [campaign, setCampaign] = useState<Campaign | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setCampaign(null);
    setError(null);
    get<Campaign>('campaign', { id })
      .then((c) => {
        setCampaign(c);
      })
      .catch(setError);
  }, [id]);
  return { campaign, error };
}

function CampaignNav({ id, current }: { id: string; current: 'overview' | 'links' }) {
  const item = (name: 'overview' | 'links', href: string, label: string) =>
    html`<li><a href=${href} aria-current=${current === name ? 'page' : undefined}>${label}</a></li>`;
  return html`<nav aria-label="Campaign" class="tabs">
    <ul>
      ${item('overview', `#/campaigns/${id}`, 'Overview')} ${item('links', `#/campaigns/${id}/links`, 'Links')}
    </ul>
  </nav>`;
}

function CampaignPage({
  id,
  current,
  children,
}: {
  id: string;
  current: 'overview' | 'links';
  children: (c: Campaign) => unknown;
}) {
  const { campaign, error } = useCampaign(id);
  return html`<main id="main">
    <p class="crumbs"><a href="#/">Campaigns</a></p>
    ${
      error
        ? html`<${Heading}>Campaign<//><${ErrorNote} error=${error} />`
        : !campaign
          ? html`<${Heading}>Loading campaign…<//>`
          : html`<${Heading}>${campaign.name}<//>
            <p class="sub">
              <a href=${campaign.url} rel="noopener noreferrer" target="_blank">${campaign.url}</a>${' · created '}<${Time}
                stamp=${campaign.created_at}
              />${' · '}<code class="id">${campaign.id}</code>
            </p>
            <${CampaignNav} id=${id} current=${current} />
            ${children(campaign)}`
    }
  </main>`;
}

/** Every this many ms the overview asks again, so new visits show without a reload. */
const REFRESH_MS = 5000;

function Overview({ campaign }: { campaign: Campaign }) {
  const [granularity, setGranularity] = useState<'hour' | 'day'>('day');
  const [series, setSeries] = useState<Series | null>(null);
  const [top, setTop] = useState<TopEntry[] | null>(null);
  const [metric, setMetric] = useState('visits');
  const [by, setBy] = useState<'referral_link' | 'referrer'>('referral_link');
  const [error, setError] = useState<unknown>(null);

  const load = useCallback(async () => {
    const now = new Date();
    // Hours: the last 48 (the API allows 7 days of hours); days: the API's default, the last 30.
    const range =
      granularity === 'hour'
        ? {
            from: toStamp(new Date(now.getTime() - 47 * 3600_000)).replace(/-\d\d-\d\d$/, '-00-00'),
            to: toStamp(now),
          }
        : {};
    try {
      const [s, t] = await Promise.all([
        get<Series>(`analytics/${campaign.id}`, { granularity, ...range }),
        get<TopEntry[]>(`analytics/${campaign.id}/top`, { metric, by, limit: 10 }),
      ]);
      setSeries(s);
      setTop(t);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  }, [campaign.id, granularity, metric, by]);

  useEffect(() => {
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);

  const empty = series?.series.every((p) => p.visits === 0 && p.referred_users === 0 && p.actions === 0);
  return html`
    <${ErrorNote} error=${error} />
    <section aria-labelledby="activity-title" class="card">
      <div class="section-head">
        <h2 id="activity-title">Activity</h2>
        <fieldset class="switch">
          <legend class="visually-hidden">Group by</legend>
          ${(['hour', 'day'] as const).map(
            (g) => html`<label key=${g}>
              <input type="radio" name="granularity" value=${g} checked=${granularity === g}
                onChange=${() => setGranularity(g)} />
              ${g === 'hour' ? 'By hour (48 h)' : 'By day (30 days)'}
            </label>`,
          )}
        </fieldset>
      </div>
      ${
        !series
          ? html`<p>Loading…</p>`
          : html`${
              empty
                ? html`<p class="empty">
                  No visits yet in this range. Create a referral link on the${' '}<a
                    href="#/campaigns/${campaign.id}/links">Links</a>${' '}tab and share it: every visit through it shows here
                  within seconds.
                </p>`
                : null
            }
            <${Chart} data=${series} />`
      }
    </section>
    <section aria-labelledby="top-title" class="card">
      <div class="section-head">
        <h2 id="top-title">Leaderboard</h2>
        <div class="inline-fields">
          <label>Rank <select value=${by} onChange=${(e: Event) => setBy((e.target as HTMLSelectElement).value as 'referrer')}>
            <option value="referral_link">links</option>
            <option value="referrer">referrers</option>
          </select></label>
          <label>by <select value=${metric} onChange=${(e: Event) => setMetric((e.target as HTMLSelectElement).value)}>
            <option value="visits">visits</option>
            <option value="unique_visits">unique visits</option>
            <option value="referred_users">referred users</option>
            <option value="actions">actions</option>
          </select></label>
        </div>
      </div>
      ${
        !top
          ? html`<p>Loading…</p>`
          : top.length === 0
            ? html`<p class="empty">Nobody on the board yet: it fills as soon as a link gets its first ${metric.replace('_', ' ')}.</p>`
            : html`<div class="scroll"><table class="leaderboard">
              <thead><tr><th scope="col" class="num">#</th><th scope="col">${by === 'referrer' ? 'Referrer' : 'Link'}</th>
                <th scope="col" class="num">${metric.replace('_', ' ')}</th></tr></thead>
              <tbody>
                ${top.map(
                  (e) => html`<tr key=${e.rank}>
                    <td class="num">${e.rank}</td>
                    <td>${'referrer_id' in e ? e.referrer_id : html`<code>${e.referral_code}</code>`}</td>
                    <td class="num">${count(e.value)}</td>
                  </tr>`,
                )}
              </tbody>
            </table></div>`
      }
    </section>
  `;
}

// --- Links -------------------------------------------------------------------------------------

const PAGE_SIZE = 25;

function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 2000);
    } catch {
      window.prompt('Copy the link:', text);
    }
  };
  return html`<button type="button" class="small" onClick=${copy}>
    ${done ? 'Copied' : 'Copy'}<span class="visually-hidden">${` ${label}`}</span>
  </button><span class="visually-hidden" aria-live="polite">${done ? 'Copied' : ''}</span>`;
}

function CreateLink({ campaign, onCreated }: { campaign: Campaign; onCreated: (link: Link) => void }) {
  const [code, setCode] = useState('');
  const [referrer, setReferrer] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    const body: Record<string, string> = { campaign_id: campaign.id };
    if (code.trim()) body.referral_code = code.trim();
    if (referrer.trim()) body.referrer_id = referrer.trim();
    onCreated(await post<Link>('referral_link', body));
    setCode('');
    setReferrer('');
  });
  return html`<section aria-labelledby="new-link-title" class="card">
    <h2 id="new-link-title">Create a link</h2>
    <form onSubmit=${submit} class="grid-form">
      <label for="link-code">Custom code <span class="optional">(optional, 4–32 of A–Z a–z 0–9 _ -)</span></label>
      <input id="link-code" maxlength="32" pattern="[A-Za-z0-9_\\-]{4,32}" spellcheck="false" value=${code}
        onInput=${(e: Event) => setCode((e.target as HTMLInputElement).value)} />
      <label for="link-referrer">Referrer id <span class="optional">(optional)</span></label>
      <input id="link-referrer" maxlength="256" value=${referrer}
        onInput=${(e: Event) => setReferrer((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create link'}</button>
    </form>
    <${ErrorNote} error=${error} />
  </section>`;
}

/** The public address a visitor follows: this stack's `/r/{code}`. */
const shareUrl = (code: string) => new URL(`r/${encodeURIComponent(code)}`, document.baseURI).href;

function Links({ campaign }: { campaign: Campaign }) {
  // The cursors of the pages seen so far: pages[i] is the cursor that fetches page i (none for the first).
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const [index, setIndex] = useState(0);
  const [rows, setRows] = useState<Link[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Link | null>(null);

  const load = useCallback(async () => {
    try {
      const result = await page<Link>(`campaign_referral_links/${campaign.id}`, {
        limit: PAGE_SIZE,
        cursor: cursors[index],
      });
      setRows(result.items);
      setNext(result.next);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  }, [campaign.id, cursors, index]);
  useEffect(() => {
    load();
  }, [load]);

  const forward = () => {
    if (!next) return;
    setCursors([...cursors.slice(0, index + 1), next]);
    setIndex(index + 1);
  };
  return html`
    <${CreateLink} campaign=${campaign} onCreated=${(link: Link) => {
      setCreated(link);
      load();
    }} />
    ${
      created
        ? html`<p class="notice" role="status">Link <code>${created.referral_code}</code> created: <code class="share">${shareUrl(created.referral_code)}</code>
          <${CopyButton} text=${shareUrl(created.referral_code)} label="the new link" /></p>`
        : null
    }
    <section aria-labelledby="links-title" class="card">
      <h2 id="links-title">Links</h2>
      <${ErrorNote} error=${error} />
      ${
        !rows
          ? html`<p>Loading…</p>`
          : rows.length === 0 && index === 0
            ? html`<p class="empty">No link yet. Create one above: each referrer gets their own, and its visits count here.</p>`
            : html`<div class="scroll"><table class="links">
                <caption class="visually-hidden">Referral links, oldest first, page ${index + 1}</caption>
                <thead><tr>
                  <th scope="col">Code</th><th scope="col">Referrer</th><th scope="col" class="num">Clicks</th>
                  <th scope="col" class="num">Referrals</th><th scope="col">Created</th><th scope="col">Share link</th>
                </tr></thead>
                <tbody>
                  ${rows.map(
                    (l) => html`<tr key=${l.id}>
                      <td><code>${l.referral_code}</code></td>
                      <td>${l.referrer_id ?? html`<span class="muted">none</span>`}</td>
                      <td class="num">${count(l.total_clicks)}</td>
                      <td class="num">${count(l.total_referrals)}</td>
                      <td><${Time} stamp=${l.created_at} /></td>
                      <td><div class="share-cell"><code class="share">${shareUrl(l.referral_code)}</code>
                        <${CopyButton} text=${shareUrl(l.referral_code)} label=${`the link ${l.referral_code}`} /></div></td>
                    </tr>`,
                  )}
                </tbody>
              </table></div>
              <nav class="pager" aria-label="Pages of links">
                <button type="button" disabled=${index === 0} onClick=${() => setIndex(index - 1)}>Previous page</button>
                <span>Page ${index + 1}</span>
                <button type="button" disabled=${!next} onClick=${forward}>Next page</button>
              </nav>`
      }
    </section>
  `;
}

// --- The app -----------------------------------------------------------------------------------

function App() {
  const [route, setRoute] = useState<Route>(parseRoute(window.location.hash));
  const [signedIn, setSignedIn] = useState(session.key() !== null);
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  const signOut = () => {
    session.signOut();
    setSignedIn(false);
  };
  let content: unknown;
  if (!signedIn) content = html`<${SignIn} onSignedIn=${() => setSignedIn(true)} />`;
  else if (route.name === 'campaigns') content = html`<${Campaigns} key="campaigns" />`;
  else if (route.name === 'overview')
    content = html`<${CampaignPage} key=${`o${route.id}`} id=${route.id} current="overview"
      children=${(c: Campaign) => html`<${Overview} campaign=${c} />`} />`;
  else
    content = html`<${CampaignPage} key=${`l${route.id}`} id=${route.id} current="links"
      children=${(c: Campaign) => html`<${Links} campaign=${c} />`} />`;
  return html`<a class="skip" href="#main" onClick=${(e: Event) => {
    e.preventDefault();
    document.querySelector<HTMLElement>('main h1')?.focus();
  }}>Skip to content</a>
    <header class="bar">
      <a class="brand" href="#/">Referrals</a>
      ${signedIn ? html`<button type="button" class="link-button" onClick=${signOut}>Sign out</button>` : null}
    </header>
    ${content}`;
}

render(html`<${App} />`, document.getElementById('app')!);
