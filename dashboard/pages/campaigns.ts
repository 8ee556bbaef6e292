/** Sign-in and the campaigns page: the account's campaigns, create one, open one by id. */
import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, type Campaign, get, page, post, type Series, session } from '../api.ts';
import { count } from '../format.ts';
import { ErrorNote, go, Heading, inputValue, NAMES, ScrollBox, Time, UUID, useSubmit } from '../ui.ts';

/** At most this many figure requests at a time: a page of 20 campaigns never floods the API. */
const FIGURES_PARALLEL = 4;
const FIGURES_DAYS = 30;

type Figures = Series['totals'] | null;

/**
 * Each listed campaign's figures of the last 30 days: the totals of endpoint 16 with its default
 * range, one request per campaign (one DynamoDB Query of 30 day items beside the campaign check),
 * a few at a time, only for the campaigns shown. The cheapest read that has them all: the links'
 * counters would need every link of every campaign. A campaign whose figures fail shows none.
 */
function useFigures(campaigns: Campaign[] | null) {
  const [figures, setFigures] = useState<Record<string, Figures>>({});
  const wanted = (campaigns ?? []).map((c) => c.id).join(',');
  useEffect(() => {
    let live = true;
    const queue = (campaigns ?? []).map((c) => c.id).filter((id) => figures[id] === undefined);
    const work = async () => {
      for (let id = queue.shift(); id !== undefined && live; id = queue.shift()) {
        const campaignId = id;
        const totals = await get<Series>(`analytics/${campaignId}`, { granularity: 'day' }).then(
          (s) => s.totals,
          () => null,
        );
        if (live) setFigures((shown) => ({ ...shown, [campaignId]: totals }));
      }
    };
    for (let i = 0; i < FIGURES_PARALLEL; i++) work();
    return () => {
      live = false;
    };
  }, [wanted]);
  return figures;
}

const figure = (f: Figures | undefined, key: 'visits' | 'referred_users' | 'actions') =>
  f === undefined
    ? html`<span class="muted">…</span>`
    : f === null
      ? html`<span class="muted">—</span>`
      : count(f[key]);

/**
 * The sign-in form; `refused`: shown because the API refused the key in use (401), which it says,
 * until the next attempt.
 */
export function SignIn({ onSignedIn, refused = false }: { onSignedIn: () => void; refused?: boolean }) {
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
    ${
      refused && !error && !busy
        ? html`<p class="error" role="alert" id="signed-out-reason">Your API key was refused (401); sign in again.</p>`
        : null
    }
    <p>Paste an api key of your account. It is kept in this tab only and forgotten when you close it.</p>
    <form onSubmit=${submit}>
      <label for="api-key">API key</label>
      <input id="api-key" type="password" autocomplete="off" spellcheck="false" required value=${key}
        onInput=${(e: Event) => setKey(inputValue(e))} />
      <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
    <${ErrorNote} error=${error} />
    <p class="hint">No key yet? Create one with <code>npm run api-key -- create</code>.</p>
  </main>`;
}

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
      <input id="campaign-name" required maxlength="256" value=${name} onInput=${(e: Event) => setName(inputValue(e))} />
      <label for="campaign-url">Landing page URL</label>
      <input id="campaign-url" required maxlength="2048" placeholder="https://example.com/signup" value=${url}
        onInput=${(e: Event) => setUrl(inputValue(e))} />
      <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create campaign'}</button>
    </form>
    <${ErrorNote} error=${error} />
  </section>`;
}

function OpenCampaign() {
  const [id, setId] = useState('');
  const { error, submit } = useSubmit(async () => {
    const value = id.trim();
    if (!UUID.test(value)) {
      throw new ApiError(
        400,
        'validation_failed',
        'A campaign id is a UUID, like 3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a.',
      );
    }
    const campaign = await get<Campaign>('campaign', { id: value });
    go(`#/campaigns/${campaign.id}`);
  });
  return html`<section aria-labelledby="open-title" class="card">
    <h2 id="open-title">Open a campaign by id</h2>
    <form onSubmit=${submit} class="grid-form">
      <label for="campaign-id">Campaign id</label>
      <input id="campaign-id" required spellcheck="false" value=${id} onInput=${(e: Event) => setId(inputValue(e))} />
      <button type="submit">Open</button>
    </form>
    <${ErrorNote} error=${error} />
  </section>`;
}

/** The account's campaigns, newest first, 20 at a time (`GET /api/v1/campaigns`). */
export function Campaigns() {
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
  const figures = useFigures(list);
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
            : html`<${ScrollBox} label="Your campaigns"><table class="campaigns stack">
              <caption class="visually-hidden">Your campaigns, newest first, with their figures of the last ${FIGURES_DAYS} days</caption>
              <thead><tr>
                <th scope="col">Campaign</th>
                <th scope="col" class="num">${NAMES.visits}</th><th scope="col" class="num">${NAMES.referred_users}</th>
                <th scope="col" class="num">${NAMES.actions}</th><th scope="col">Created</th>
                <th scope="col"><span class="visually-hidden">Settings</span></th>
              </tr></thead>
              <tbody>
              ${list.map(
                (c) => html`<tr key=${c.id}>
                  <td data-label="Campaign"><a class="campaign-name" href="#/campaigns/${c.id}">${c.name}</a>
                    <br /><code class="id">${c.id}</code></td>
                  <td class="num" data-label=${`${NAMES.visits}, ${FIGURES_DAYS} days`}>${figure(figures[c.id], 'visits')}</td>
                  <td class="num" data-label=${`${NAMES.referred_users}, ${FIGURES_DAYS} days`}>${figure(figures[c.id], 'referred_users')}</td>
                  <td class="num" data-label=${`${NAMES.actions}, ${FIGURES_DAYS} days`}>${figure(figures[c.id], 'actions')}</td>
                  <td data-label="Created"><${Time} stamp=${c.created_at} /></td>
                  <td data-label="Settings"><a href="#/campaigns/${c.id}/settings">Settings<span class="visually-hidden"> of ${c.name}</span></a></td>
                </tr>`,
              )}
              </tbody>
            </table><//>
            <p class="hint">Figures of the last ${FIGURES_DAYS} days (UTC). ${NAMES.actions}: what your app recorded, visits not included.</p>`
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
