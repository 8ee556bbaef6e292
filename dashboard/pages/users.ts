/** Look up a referred user of a campaign by the id your app gave it: who referred it, and that link's counters. */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { type Campaign, get, type ReferredUser } from '../api.ts';
import { count } from '../format.ts';
import { ErrorNote, inputValue, Time, useSubmit } from '../ui.ts';

export function ReferredUsers({ campaign }: { campaign: Campaign }) {
  const [id, setId] = useState('');
  const [user, setUser] = useState<ReferredUser | null>(null);
  const { busy, error, submit } = useSubmit(async () => {
    setUser(null);
    setUser(
      await get<ReferredUser>('referred_user', { campaign_id: campaign.id, referred_user_id: id.trim() }),
    );
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
              <dt>Link's clicks</dt><dd>${count(link.total_clicks)}</dd>
              <dt>Link's referrals</dt><dd>${count(link.total_referrals)}</dd>
              <dt>Referral link</dt><dd class="wrap">${link.referral_link}</dd>
            </dl>
          </section>`
        : null
    }`;
}
