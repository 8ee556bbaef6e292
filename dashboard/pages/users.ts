/**
 * A campaign's referred users: who signed up, through which link and referrer, and when, newest
 * first, paged (endpoint 33), narrowed to one link or one referrer; and a look-up by the id your
 * app gave one.
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { type Campaign, type Conversion, get, page, type ReferredUser } from '../api.ts';
import { amount, count } from '../format.ts';
import { ErrorNote, inputValue, Loaded, NAMES, ScrollBox, Time, useCursorPages, useSubmit } from '../ui.ts';

const PAGE_SIZE = 25;
/** A look-up shows this many of the user's sales, newest first. */
const SALES_SHOWN = 25;

type Filter = { by: 'all' } | { by: 'referrer'; value: string } | { by: 'link'; value: string };

const queryOf = (filter: Filter) =>
  filter.by === 'referrer'
    ? { referrer_id: filter.value }
    : filter.by === 'link'
      ? { referral_link_id: filter.value }
      : {};

function UserList({ campaign }: { campaign: Campaign }) {
  const [filter, setFilter] = useState<Filter>({ by: 'all' });
  const [by, setBy] = useState<Filter['by']>('all');
  const [value, setValue] = useState('');
  const { rows, error, index, pager } = useCursorPages<ReferredUser>(`referred_users/${campaign.id}`, {
    limit: PAGE_SIZE,
    ...queryOf(filter),
  });
  const apply = (e: Event) => {
    e.preventDefault();
    setFilter(by === 'all' || !value.trim() ? { by: 'all' } : { by, value: value.trim() });
  };
  const showLink = (user: ReferredUser) => {
    setBy('link');
    setValue(String(user.referral_link.id));
    setFilter({ by: 'link', value: String(user.referral_link.id) });
  };
  const showReferrer = (referrer: string) => {
    setBy('referrer');
    setValue(referrer);
    setFilter({ by: 'referrer', value: referrer });
  };
  return html`<section aria-labelledby="users-title" class="card">
    <div class="section-head">
      <h2 id="users-title">Referred users</h2>
      <form class="row-form" onSubmit=${apply} aria-label="Filter referred users">
        <label for="users-by">Show</label>
        <select id="users-by" value=${by} onChange=${(e: Event) => {
          const next = inputValue(e) as Filter['by'];
          setBy(next);
          if (next === 'all') setFilter({ by: 'all' });
        }}>
          <option value="all">everyone</option>
          <option value="referrer">of one referrer</option>
          <option value="link">through one link (id)</option>
        </select>
        ${
          by === 'all'
            ? null
            : html`<label class="visually-hidden" for="users-filter">${by === 'link' ? 'Link id' : 'Referrer id'}</label>
              <input id="users-filter" required maxlength="256" spellcheck="false" value=${value}
                inputmode=${by === 'link' ? 'numeric' : undefined} pattern=${by === 'link' ? '[1-9][0-9]*' : undefined}
                placeholder=${by === 'link' ? 'link id, e.g. 1042' : 'referrer id'}
                onInput=${(e: Event) => setValue(inputValue(e))} />
              <button type="submit" class="secondary">Filter</button>`
        }
      </form>
    </div>
    <p class="sub">Who signed up through a link, newest first: the <code>referred_user_id</code> your app sent, the link and its
      referrer.${filter.by === 'all' ? '' : filter.by === 'link' ? ` Only link ${filter.value}.` : ` Only referrer ${filter.value}.`}</p>
    <${Loaded} data=${rows} error=${error}
      empty=${
        filter.by === 'all'
          ? html`No signup yet. Your app records one with <code>POST /api/v1/referred_user</code> when someone signs up
              through a link.`
          : 'Nobody signed up through this filter yet. Choose "everyone" to see them all.'
      }>
      ${(shown: ReferredUser[]) => html`<${ScrollBox} label="Referred users"><table class="users stack">
        <caption class="visually-hidden">Referred users, newest first, page ${index + 1}</caption>
        <thead><tr>
          <th scope="col">Referred user</th><th scope="col">Link</th><th scope="col">Referrer</th>
          <th scope="col">Signed up</th><th scope="col" class="num">Link's ${NAMES.referred_users.toLowerCase()}</th>
        </tr></thead>
        <tbody>
          ${shown.map(
            (u) => html`<tr key=${u.id}>
              <td data-label="Referred user" class="wrap"><strong>${u.referred_user_id}</strong></td>
              <td data-label="Link"><button type="button" class="link-like" onClick=${() => showLink(u)}
                ><code>${u.referral_link.referral_code}</code><span class="visually-hidden"> (show only this link's)</span></button></td>
              <td data-label="Referrer">${
                u.referral_link.referrer_id === null
                  ? html`<span class="muted">none</span>`
                  : html`<button type="button" class="link-like" onClick=${() => showReferrer(u.referral_link.referrer_id!)}
                      >${u.referral_link.referrer_id}<span class="visually-hidden"> (show only this referrer's)</span></button>`
              }</td>
              <td data-label="Signed up"><${Time} stamp=${u.created_at} /></td>
              <td data-label=${`Link's ${NAMES.referred_users.toLowerCase()}`} class="num">${count(u.referral_link.total_referrals)}</td>
            </tr>`,
          )}
        </tbody>
      </table><//>`}
    <//>
    ${rows && (rows.length > 0 || index > 0) ? pager('Pages of referred users') : null}
  </section>`;
}

const STATUS = {
  completed: 'completed',
  partially_refunded: 'partly refunded',
  refunded: 'refunded',
} as const;

/** A referred user's conversions (endpoint 26), in their currency's own digits. */
function Sales({ sales, more }: { sales: Conversion[]; more: boolean }) {
  if (sales.length === 0)
    return html`<p class="empty">No sale yet. Your app records one with <code>POST /api/v1/conversion</code>.</p>`;
  return html`<h3 id="sales-title">Sales${more ? ` (the newest ${SALES_SHOWN})` : ''}</h3>
    <${ScrollBox} label="Sales"><table class="sales stack" aria-labelledby="sales-title">
      <thead><tr>
        <th scope="col">When</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Refunded</th>
        <th scope="col">Status</th><th scope="col">Your id</th>
      </tr></thead>
      <tbody>
        ${sales.map(
          (c) => html`<tr key=${c.id}>
            <td data-label="When"><${Time} stamp=${c.created_at} /></td>
            <td data-label="Amount" class="num">${amount(c.amount, c.currency)}</td>
            <td data-label="Refunded" class="num">${c.refunded_amount > 0 ? amount(c.refunded_amount, c.currency) : '—'}</td>
            <td data-label="Status">${STATUS[c.status] ?? c.status}</td>
            <td data-label="Your id" class="wrap">${c.external_id ?? html`<span class="muted">none</span>`}</td>
          </tr>`,
        )}
      </tbody>
    </table><//>`;
}

function LookUp({ campaign }: { campaign: Campaign }) {
  const [id, setId] = useState('');
  const [user, setUser] = useState<ReferredUser | null>(null);
  const [sales, setSales] = useState<{ items: Conversion[]; more: boolean } | null>(null);
  const { busy, error, submit } = useSubmit(async () => {
    setUser(null);
    setSales(null);
    const query = { referred_user_id: id.trim() };
    // The user first: an unknown one is the API's 404 message, not an empty list of sales.
    setUser(await get<ReferredUser>('referred_user', { campaign_id: campaign.id, ...query }));
    const first = await page<Conversion>(`conversions/${campaign.id}`, { ...query, limit: SALES_SHOWN });
    setSales({ items: first.items, more: first.next !== null });
  });
  const link = user?.referral_link;
  return html`<section aria-labelledby="lookup-title" class="card">
      <h2 id="lookup-title">Look up a referred user</h2>
      <form onSubmit=${submit} class="row-form">
        <label for="user-id">Referred user id</label>
        <input id="user-id" required maxlength="256" spellcheck="false" value=${id} onInput=${(e: Event) => setId(inputValue(e))} />
        <button type="submit" disabled=${busy}>${busy ? 'Looking up…' : 'Look up'}</button>
      </form>
      <${ErrorNote} error=${error} />
      ${
        !user && !error
          ? html`<p class="empty">Enter the <code>referred_user_id</code> your app sent when the user signed up
              (<code>POST /api/v1/referred_user</code>) to see which link brought them.</p>`
          : null
      }
    </section>
    ${
      user && link
        ? html`<section aria-labelledby="user-title" class="card">
            <h2 id="user-title">${user.referred_user_id}</h2>
            <dl class="facts">
              <dt>Signed up</dt><dd><${Time} stamp=${user.created_at} /></dd>
              <dt>Record id</dt><dd>${user.id}</dd>
              <dt>Link</dt><dd><code>${link.referral_code}</code> (id ${link.id})</dd>
              <dt>Referrer</dt><dd>${link.referrer_id ?? html`<span class="muted">none</span>`}</dd>
              <dt>Link's ${NAMES.clicks.toLowerCase()}</dt><dd>${count(link.total_clicks)}</dd>
              <dt>Link's ${NAMES.referred_users.toLowerCase()}</dt><dd>${count(link.total_referrals)}</dd>
              <dt>Landing page</dt><dd class="wrap">${link.referral_link}</dd>
              <dt>Click id</dt><dd class="wrap">${
                user.click_id
                  ? html`<code>${user.click_id}</code>`
                  : html`<span class="muted">none (signed up by code or link id)</span>`
              }</dd>
              ${user.clicked_at ? html`<dt>Clicked</dt><dd><${Time} stamp=${user.clicked_at} /></dd>` : null}
            </dl>
            ${sales ? html`<${Sales} sales=${sales.items} more=${sales.more} />` : null}
          </section>`
        : null
    }`;
}

export function ReferredUsers({ campaign }: { campaign: Campaign }) {
  return html`<${UserList} campaign=${campaign} /><${LookUp} campaign=${campaign} />`;
}
