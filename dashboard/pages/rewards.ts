/**
 * A campaign's rewards (endpoints 27–32): the review queue with approve and void, every reward by
 * state and recipient, one recipient's balance with "record a payout", and the payouts recorded.
 * The ledger is the API's: this page only reads it and sends the four actions a person takes.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import {
  type Balance,
  type Campaign,
  get,
  type Payout,
  post,
  type Reward,
  type RewardStatus,
} from '../api.ts';
import { amount } from '../format.ts';
import { ErrorNote, inputValue, Loaded, ScrollBox, Time, useCursorPages, useSubmit } from '../ui.ts';

const PAGE_SIZE = 25;

/** The states as a finance reader says them, in the order a reward goes through them. */
const STATES: Array<[RewardStatus, string]> = [
  ['in_review', 'in review'],
  ['pending', 'pending (on hold)'],
  ['approved', 'approved (to pay)'],
  ['paid', 'paid'],
  ['voided', 'voided'],
];
const stateLabel = (status: RewardStatus) => STATES.find(([s]) => s === status)?.[1] ?? status;

const REASONS: Record<string, string> = {
  referrer_signups_per_hour: 'referrer over the signups-per-hour limit',
  repeat_visitor: 'same visitor signed up through this link within 24 h',
};

/** Asks a list again when an action elsewhere on the page changed what it shows. */
function useReloadOn(version: number, load: () => void) {
  // Only a new version reloads: the list's first load is its own.
  useEffect(() => {
    if (version > 0) load();
  }, [version]);
}

const sourceLabel = (r: Reward) =>
  r.source_type === 'conversion' ? `sale ${r.source_id}` : `signup ${r.source_id}`;

/** Approve (from review, or ending a hold now) and void with a reason: the reward's two actions. */
function RewardActions({ reward, onChanged }: { reward: Reward; onChanged: () => void }) {
  const [voiding, setVoiding] = useState(false);
  const [reason, setReason] = useState('');
  const approve = useSubmit(async () => {
    await post(`reward/${encodeURIComponent(reward.id)}/approve`);
    onChanged();
  });
  const voidIt = useSubmit(async () => {
    await post(`reward/${encodeURIComponent(reward.id)}/void`, {
      reason: reason.trim() || 'voided in the dashboard',
    });
    setVoiding(false);
    onChanged();
  });
  const open = reward.status === 'in_review' || reward.status === 'pending' || reward.status === 'approved';
  if (!open) return html`<span class="muted">—</span>`;
  return html`<div class="row-actions">
    ${
      reward.status === 'approved'
        ? null
        : html`<button type="button" class="small" data-primary disabled=${approve.busy} onClick=${() => approve.submit()}
            >${reward.status === 'in_review' ? 'Approve' : 'End hold'}<span class="visually-hidden"> ${reward.id}</span></button>`
    }
    ${
      voiding
        ? html`<form class="confirm" onSubmit=${voidIt.submit} aria-label=${`Void ${reward.id}`}>
            <label for=${`void-${reward.id}`}>Why void it?</label>
            <input id=${`void-${reward.id}`} maxlength="256" value=${reason} placeholder="e.g. self-referral"
              onInput=${(e: Event) => setReason(inputValue(e))} />
            <div class="confirm-buttons">
              <button type="submit" class="danger small" disabled=${voidIt.busy}>Void</button>
              <button type="button" class="secondary small" onClick=${() => setVoiding(false)}>Cancel</button>
            </div>
          </form>`
        : html`<button type="button" class="danger-outline small" onClick=${() => setVoiding(true)}
            >Void…<span class="visually-hidden"> ${reward.id}</span></button>`
    }
    <${ErrorNote} error=${approve.error ?? voidIt.error} />
  </div>`;
}

function RewardTable({
  rows,
  caption,
  onChanged,
}: {
  rows: Reward[];
  caption: string;
  onChanged: () => void;
}) {
  return html`<${ScrollBox} label=${caption}><table class="rewards stack">
    <caption class="visually-hidden">${caption}</caption>
    <thead><tr>
      <th scope="col">Recipient</th><th scope="col" class="num">Amount</th><th scope="col">State</th>
      <th scope="col">For</th><th scope="col">Available</th><th scope="col">Why</th><th scope="col" class="actions">Actions</th>
    </tr></thead>
    <tbody>
      ${rows.map(
        (r) => html`<tr key=${r.id} data-reward=${r.id}>
          <td data-label="Recipient" class="wrap"><strong>${r.recipient_id}</strong>
            <span class="muted"> (${r.recipient === 'referrer' ? 'referrer' : 'referred user'})</span></td>
          <td data-label="Amount" class="num">${amount(r.amount, r.currency)}</td>
          <td data-label="State">${stateLabel(r.status)}</td>
          <td data-label="For" class="wrap">${sourceLabel(r)}${r.amount < 0 ? ' (adjustment)' : ''} · rule <code>${r.rule_id}</code></td>
          <td data-label="Available"><${Time} stamp=${r.available_at} /></td>
          <td data-label="Why" class="wrap">${
            r.review_reasons.length > 0
              ? r.review_reasons.map((reason) => REASONS[reason] ?? reason).join('; ')
              : r.void_reason
                ? `voided: ${r.void_reason}`
                : r.payout_id
                  ? html`payout <code>${r.payout_id}</code>`
                  : html`<span class="muted">—</span>`
          }</td>
          <td data-label="Actions" class="actions"><${RewardActions} reward=${r} onChanged=${onChanged} /></td>
        </tr>`,
      )}
    </tbody>
  </table><//>`;
}

/** What waits for a person: rewards held back by a review signal. Nothing leaves it by itself. */
function ReviewQueue({ campaign, onChanged }: { campaign: Campaign; onChanged: () => void }) {
  const { rows, error, index, load, pager } = useCursorPages<Reward>(`rewards/${campaign.id}`, {
    status: 'in_review',
    limit: PAGE_SIZE,
  });
  const changed = () => {
    load();
    onChanged();
  };
  return html`<section aria-labelledby="review-title" class="card">
    <h2 id="review-title">Review queue</h2>
    <p class="sub">Rewards a signal held back: approve to start their hold (counted from when they were made), or void.</p>
    <${Loaded} data=${rows} error=${error} empty="Nothing to review.">
      ${(shown: Reward[]) => html`<${RewardTable} rows=${shown} caption="Rewards in review" onChanged=${changed} />`}
    <//>
    ${rows && (rows.length > 0 || index > 0) ? pager('Pages of the review queue') : null}
  </section>`;
}

function RewardList({
  campaign,
  version,
  onChanged,
}: {
  campaign: Campaign;
  version: number;
  onChanged: () => void;
}) {
  const [status, setStatus] = useState('');
  const [recipient, setRecipient] = useState('');
  const [typed, setTyped] = useState('');
  const { rows, error, index, load, pager } = useCursorPages<Reward>(`rewards/${campaign.id}`, {
    status,
    recipient_id: recipient,
    limit: PAGE_SIZE,
  });
  useReloadOn(version, load);
  const changed = () => {
    load();
    onChanged();
  };
  return html`<section aria-labelledby="rewards-title" class="card">
    <div class="section-head">
      <h2 id="rewards-title">Rewards</h2>
      <form class="row-form" aria-label="Filter rewards" onSubmit=${(e: Event) => {
        e.preventDefault();
        setRecipient(typed.trim());
      }}>
        <label for="rewards-status">State</label>
        <select id="rewards-status" value=${status} onChange=${(e: Event) => setStatus(inputValue(e))}>
          <option value="">all</option>
          ${STATES.map(([s, label]) => html`<option value=${s}>${label}</option>`)}
        </select>
        <label for="rewards-recipient">Recipient id</label>
        <input id="rewards-recipient" maxlength="256" spellcheck="false" value=${typed} placeholder="anyone"
          onInput=${(e: Event) => setTyped(inputValue(e))} />
        <button type="submit" class="secondary">Filter</button>
      </form>
    </div>
    <p class="sub">Every reward and adjustment, newest first. A reward is never edited: a refund adds a negative adjustment.</p>
    <${Loaded} data=${rows} error=${error}
      empty=${
        campaign.reward_rules?.length
          ? 'No reward matches yet.'
          : html`No reward rules yet: add them with <code>PATCH /api/v1/campaign</code> (<code>reward_rules</code>).`
      }>
      ${(shown: Reward[]) => html`<${RewardTable} rows=${shown} caption=${`Rewards, page ${index + 1}`} onChanged=${changed} />`}
    <//>
    ${rows && (rows.length > 0 || index > 0) ? pager('Pages of rewards') : null}
  </section>`;
}

/** One recipient's balance by state, and a payout of what is approved, confirmed first. */
function BalanceAndPayout({ campaign, onPaid }: { campaign: Campaign; onPaid: () => void }) {
  const [recipient, setRecipient] = useState<'referrer' | 'referred_user'>('referrer');
  const [id, setId] = useState('');
  const [balance, setBalance] = useState<Balance | null>(null);
  const [reference, setReference] = useState('');
  const [confirming, setConfirming] = useState(false);
  const [paid, setPaid] = useState<Payout | null>(null);
  const who = { recipient, id: id.trim() };
  const look = useSubmit(async () => {
    setBalance(null);
    setPaid(null);
    setConfirming(false);
    setBalance(await get<Balance>(`balance/${campaign.id}/${encodeURIComponent(who.id)}`, { recipient }));
  });
  const pay = useSubmit(async () => {
    const payout = await post<Payout>('payout', {
      campaign_id: campaign.id,
      recipient,
      recipient_id: who.id,
      ...(reference.trim() ? { reference: reference.trim() } : {}),
    });
    setPaid(payout);
    setConfirming(false);
    setBalance(await get<Balance>(`balance/${campaign.id}/${encodeURIComponent(who.id)}`, { recipient }));
    onPaid();
  });
  return html`<section aria-labelledby="balance-title" class="card">
    <h2 id="balance-title">Balance and payout</h2>
    <form class="row-form" onSubmit=${look.submit} aria-label="Look up a balance">
      <label for="balance-kind">Recipient</label>
      <select id="balance-kind" value=${recipient} onChange=${(e: Event) => setRecipient(inputValue(e) as typeof recipient)}>
        <option value="referrer">referrer</option>
        <option value="referred_user">referred user</option>
      </select>
      <label class="visually-hidden" for="balance-id">Recipient id</label>
      <input id="balance-id" required maxlength="256" spellcheck="false" value=${id} placeholder="e.g. alice"
        onInput=${(e: Event) => setId(inputValue(e))} />
      <button type="submit" disabled=${look.busy}>${look.busy ? 'Looking up…' : 'Show balance'}</button>
    </form>
    <${ErrorNote} error=${look.error} />
    ${
      balance
        ? html`<dl class="facts balance" aria-label=${`Balance of ${who.id}`}>
            <dt>In review</dt><dd>${amount(balance.in_review, balance.currency)}</dd>
            <dt>Pending (on hold)</dt><dd>${amount(balance.pending, balance.currency)}</dd>
            <dt>Approved (to pay)</dt><dd><strong>${amount(balance.approved, balance.currency)}</strong></dd>
            <dt>Paid</dt><dd>${amount(balance.paid, balance.currency)}</dd>
          </dl>
          ${
            confirming
              ? html`<div class="confirm" role="group" aria-labelledby="payout-question">
                  <p id="payout-question"><strong>Record a payout of ${amount(balance.approved, balance.currency)} to ${who.id}?</strong>
                    Every approved reward of theirs becomes paid. The service moves no money: pay them first through your
                    payment provider, and put its reference here.</p>
                  <label for="payout-reference">Reference (optional)</label>
                  <input id="payout-reference" maxlength="256" value=${reference} placeholder="e.g. tr_1NzX…"
                    onInput=${(e: Event) => setReference(inputValue(e))} />
                  <div class="confirm-buttons">
                    <button type="button" class="danger" disabled=${pay.busy} onClick=${() => pay.submit()}>
                      ${pay.busy ? 'Recording…' : 'Yes, record the payout'}</button>
                    <button type="button" class="secondary" disabled=${pay.busy} onClick=${() => setConfirming(false)}>Cancel</button>
                  </div>
                </div>`
              : html`<button type="button" disabled=${balance.approved <= 0} onClick=${() => setConfirming(true)}
                  >Record a payout…</button>${balance.approved <= 0 ? html` <span class="muted">Nothing approved to pay.</span>` : null}`
          }`
        : null
    }
    <${ErrorNote} error=${pay.error} />
    ${
      paid
        ? html`<p class="notice" role="status">${`Payout ${paid.id} recorded: ${amount(paid.amount, paid.currency)} for ${paid.reward_ids.length} ${paid.reward_ids.length === 1 ? 'reward' : 'rewards'}.`}</p>`
        : null
    }
  </section>`;
}

function Payouts({ campaign, version }: { campaign: Campaign; version: number }) {
  const { rows, error, index, load, pager } = useCursorPages<Payout>(`payouts/${campaign.id}`, {
    limit: PAGE_SIZE,
  });
  useReloadOn(version, load);
  return html`<section aria-labelledby="payouts-title" class="card">
    <h2 id="payouts-title">Payouts</h2>
    <${Loaded} data=${rows} error=${error} empty="No payout recorded yet.">
      ${(shown: Payout[]) => html`<${ScrollBox} label="Payouts"><table class="payouts stack">
        <caption class="visually-hidden">Payouts, newest first, page ${index + 1}</caption>
        <thead><tr>
          <th scope="col">When</th><th scope="col">Recipient</th><th scope="col" class="num">Amount</th>
          <th scope="col" class="num">Rewards</th><th scope="col">Reference</th>
        </tr></thead>
        <tbody>
          ${shown.map(
            (p) => html`<tr key=${p.id}>
              <td data-label="When"><${Time} stamp=${p.created_at} /></td>
              <td data-label="Recipient" class="wrap">${p.recipient_id ?? html`<span class="muted">—</span>`}</td>
              <td data-label="Amount" class="num">${amount(p.amount, p.currency)}</td>
              <td data-label="Rewards" class="num">${p.reward_ids.length}</td>
              <td data-label="Reference" class="wrap">${p.reference ?? html`<span class="muted">none</span>`}</td>
            </tr>`,
          )}
        </tbody>
      </table><//>`}
    <//>
    ${rows && (rows.length > 0 || index > 0) ? pager('Pages of payouts') : null}
  </section>`;
}

export function Rewards({ campaign }: { campaign: Campaign }) {
  // Bumped by any action, so the lists below show its effect without a reload.
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  return html`<${ReviewQueue} campaign=${campaign} onChanged=${changed} />
    <${BalanceAndPayout} campaign=${campaign} onPaid=${changed} />
    <${RewardList} campaign=${campaign} version=${version} onChanged=${changed} />
    <${Payouts} campaign=${campaign} version=${version} />`;
}
