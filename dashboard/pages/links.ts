/** A campaign's links: a paged table with each link's visits of the last 14 days, create, copy. */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { type Campaign, get, type Link, post, type Series } from '../api.ts';
import { Sparkline } from '../chart.ts';
import { count, toStamp } from '../format.ts';
import {
  CopyButton,
  ErrorNote,
  Glossary,
  inputValue,
  Loaded,
  NAMES,
  ScrollBox,
  ShareUrl,
  shareUrlOf,
  Time,
  useCursorPages,
  useSubmit,
} from '../ui.ts';

const PAGE_SIZE = 25;
const SPARK_DAYS = 14;
/** At most this many series requests at a time: a page of 25 links never floods the API. */
const SPARK_PARALLEL = 4;

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
        onInput=${(e: Event) => setCode(inputValue(e))} />
      <label for="link-referrer">Referrer id <span class="optional">(optional)</span></label>
      <input id="link-referrer" maxlength="256" value=${referrer} onInput=${(e: Event) => setReferrer(inputValue(e))} />
      <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create link'}</button>
    </form>
    <${ErrorNote} error=${error} />
  </section>`;
}

/**
 * Each shown link's visits per day over the last 14 days (endpoint 16 with `referral_link_id`):
 * only the links on the page, a few requests at a time. A link whose series fails shows none.
 */
function useVisitsPerDay(campaignId: string, links: Link[] | null) {
  const [byLink, setByLink] = useState<Record<number, number[] | null>>({});
  const ids = (links ?? []).map((l) => l.id);
  const wanted = ids.join(',');
  useEffect(() => {
    let live = true;
    const queue = [...ids];
    const from = toStamp(new Date(Date.now() - (SPARK_DAYS - 1) * 86400_000));
    const work = async () => {
      for (let id = queue.shift(); id !== undefined && live; id = queue.shift()) {
        const link = id;
        const values = await get<Series>(`analytics/${campaignId}`, {
          granularity: 'day',
          from,
          referral_link_id: link,
        }).then(
          (s) => s.series.map((p) => p.visits),
          () => null,
        );
        if (live) setByLink((shown) => ({ ...shown, [link]: values }));
      }
    };
    for (let i = 0; i < SPARK_PARALLEL; i++) work();
    return () => {
      live = false;
    };
  }, [campaignId, wanted]);
  return byLink;
}

export function Links({ campaign }: { campaign: Campaign }) {
  const { rows, error, index, load, pager } = useCursorPages<Link>(`campaign_referral_links/${campaign.id}`, {
    limit: PAGE_SIZE,
  });
  const [created, setCreated] = useState<Link | null>(null);
  const visits = useVisitsPerDay(campaign.id, rows);
  return html`
    <${CreateLink} campaign=${campaign} onCreated=${(link: Link) => {
      setCreated(link);
      load();
    }} />
    ${
      created
        ? html`<p class="notice" role="status">Link <code>${created.referral_code}</code> created. Give your referrer its share URL:
          <${ShareUrl} url=${shareUrlOf(created)} code=${created.referral_code} />${' '}
          <${CopyButton} text=${shareUrlOf(created)} label="the new link" /></p>`
        : null
    }
    <section aria-labelledby="links-title" class="card">
      <h2 id="links-title">Links</h2>
      <p class="sub">Give each referrer the <strong>share URL</strong> of their link: a visit through it is counted, then
        lands on the campaign's page.</p>
      <${Loaded} data=${rows} error=${error}
        empty="No link yet. Create one above: each referrer gets their own, and its visits count here.">
        ${(shown: Link[]) => html`<${ScrollBox} label="Referral links"><table class="links stack">
            <caption class="visually-hidden">Referral links, oldest first, page ${index + 1}</caption>
            <thead><tr>
              <th scope="col">Link and share URL</th><th scope="col">Referrer</th>
              <th scope="col">${NAMES.visits}, ${SPARK_DAYS} days</th>
              <th scope="col" class="num">${NAMES.referred_users}</th><th scope="col" class="num">${NAMES.clicks}</th>
              <th scope="col">Created</th>
            </tr></thead>
            <tbody>
              ${shown.map(
                (l) => html`<tr key=${l.id}>
                  <td data-label="Link"><div class="share-cell">
                    <${ShareUrl} url=${shareUrlOf(l)} code=${l.referral_code} />
                    <span data-primary><${CopyButton} text=${shareUrlOf(l)} label=${`the link ${l.referral_code}`} /></span>
                  </div></td>
                  <td data-label="Referrer">${l.referrer_id ?? html`<span class="muted">none</span>`}</td>
                  <td data-label=${`${NAMES.visits}, ${SPARK_DAYS} days`}>${
                    visits[l.id] === undefined
                      ? html`<span class="muted">…</span>`
                      : visits[l.id] === null
                        ? html`<span class="muted">unavailable</span>`
                        : html`<${Sparkline} values=${visits[l.id]}
                            label=${`${l.referral_code}: ${count(visits[l.id]!.reduce((a, b) => a + b, 0))} visits in the last ${SPARK_DAYS} days`} />`
                  }</td>
                  <td class="num" data-label=${NAMES.referred_users}>${count(l.total_referrals)}</td>
                  <td class="num" data-label=${NAMES.clicks}>${count(l.total_clicks)}</td>
                  <td data-label="Created"><${Time} stamp=${l.created_at} /></td>
                </tr>`,
              )}
            </tbody>
          </table><//>`}
      <//>
      ${rows && (rows.length > 0 || index > 0) ? pager('Pages of links') : null}
      <${Glossary} />
    </section>
  `;
}
