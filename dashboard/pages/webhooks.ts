/**
 * A campaign's webhook traffic: the delivery log (every attempt, newest first, by status) with a
 * redeliver button per event, and the events feed (every event, oldest first, its body on demand).
 */
import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { type Campaign, type Delivery, type FeedEvent, page, post } from '../api.ts';
import { count } from '../format.ts';
import { ErrorNote, inputValue, Loaded, Time, useCursorPages, useSubmit } from '../ui.ts';

const PAGE_SIZE = 25;
/** The first page of the log is asked again this often, so new attempts show without a click. */
const REFRESH_MS = 5000;

function Redeliver({ delivery, onQueued }: { delivery: Delivery; onQueued: (eventId: string) => void }) {
  const { busy, error, submit } = useSubmit(async () => {
    await post(`events/${encodeURIComponent(delivery.event_id)}/redeliver`);
    onQueued(delivery.event_id);
  });
  // A test event is sent once and kept nowhere: nothing to send again.
  if (delivery.event_type === 'webhook.test') return html`<span class="muted">test</span>`;
  return html`<button type="button" class="small" disabled=${busy} onClick=${() => submit()}>
      Redeliver<span class="visually-hidden"> ${delivery.event_id}</span>
    </button><${ErrorNote} error=${error} />`;
}

const answerOf = (d: Delivery) =>
  [d.status_code === null ? null : `HTTP ${d.status_code}`, d.error].filter(Boolean).join(' — ') || '—';

export function Deliveries({ campaign }: { campaign: Campaign }) {
  const [status, setStatus] = useState('');
  const [queued, setQueued] = useState<string | null>(null);
  const { rows, error, index, load, pager } = useCursorPages<Delivery>(`webhook_deliveries/${campaign.id}`, {
    limit: PAGE_SIZE,
    status,
  });
  useEffect(() => {
    if (index > 0) return;
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, [index, load]);
  return html`<section aria-labelledby="deliveries-title" class="card">
    <div class="section-head">
      <h2 id="deliveries-title">Delivery attempts</h2>
      <div class="inline-fields">
        <label>Status <select value=${status} onChange=${(e: Event) => setStatus(inputValue(e))}>
          <option value="">all</option>
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
          <option value="pending">pending (retry due)</option>
        </select></label>
        <button type="button" class="secondary small" onClick=${load}>Refresh</button>
      </div>
    </div>
    <p class="sub">
      Webhook ${campaign.webhook_url ? html`<code class="wrap">${campaign.webhook_url}</code>` : 'not set'}, ${campaign.webhook_status}.
      Every attempt is kept 30 days, newest first.
    </p>
    ${queued ? html`<p class="notice" role="status">A new delivery of <code>${queued}</code> is queued: it shows here within seconds.</p>` : null}
    <${Loaded} data=${rows} error=${error}
      empty=${
        status
          ? `No ${status} attempt. Choose "all" to see every attempt.`
          : html`No delivery yet. Set a webhook URL in <a href="#/campaigns/${campaign.id}/settings">Settings</a> and send a test event, or wait for the next visit or signup.`
      }>
      ${(shown: Delivery[]) => html`<div class="scroll"><table class="deliveries">
        <caption class="visually-hidden">Delivery attempts, newest first, page ${index + 1}</caption>
        <thead><tr>
          <th scope="col">When</th><th scope="col">Event</th><th scope="col" class="num">Attempt</th>
          <th scope="col">Status</th><th scope="col">Answer</th><th scope="col" class="num">Duration</th>
          <th scope="col">Next attempt</th><th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr></thead>
        <tbody>
          ${shown.map(
            (d) => html`<tr key=${d.id}>
              <td><${Time} stamp=${d.attempted_at} /></td>
              <td>${d.event_type}<br /><code class="id">${d.event_id}</code></td>
              <td class="num">${d.attempt}</td>
              <td><span class="status ${d.status}">${d.status}</span></td>
              <td class="answer">${answerOf(d)}</td>
              <td class="num">${count(d.duration_ms)} ms</td>
              <td>${d.next_attempt_at ? html`<${Time} stamp=${d.next_attempt_at} />` : '—'}</td>
              <td><${Redeliver} delivery=${d} onQueued=${setQueued} /></td>
            </tr>`,
          )}
        </tbody>
      </table></div>`}
    <//>
    ${rows && (rows.length > 0 || index > 0) ? pager('Pages of delivery attempts') : null}
  </section>`;
}

/** The events feed: pages appended, oldest first; at its end, a check for events that came since. */
export function Events({ campaign }: { campaign: Campaign }) {
  const [events, setEvents] = useState<FeedEvent[] | null>(null);
  const [cursor, setCursor] = useState<{ next: string | null; poll: string | null }>({
    next: null,
    poll: null,
  });
  const [error, setError] = useState<unknown>(null);
  const [checked, setChecked] = useState(false);
  const load = useCallback(
    async (from?: string) => {
      setError(null);
      try {
        const p = await page<FeedEvent>(`events/${campaign.id}`, { limit: PAGE_SIZE, cursor: from });
        setEvents((shown) => [...(from ? (shown ?? []) : []), ...p.items]);
        setCursor({ next: p.next, poll: p.poll });
        setChecked(!!from && p.items.length === 0);
      } catch (failure) {
        setError(failure);
      }
    },
    [campaign.id],
  );
  useEffect(() => {
    load();
  }, [load]);
  const more = cursor.next ?? cursor.poll;
  return html`<section aria-labelledby="events-title" class="card">
    <h2 id="events-title">Events</h2>
    <p class="sub">Every event of the last 30 days, oldest first: exactly the webhook bodies, sent or not.</p>
    <${Loaded} data=${events} error=${null}
      empty="No event yet. Each visit through a link and each signup adds one.">
      ${(shown: FeedEvent[]) => html`<ol class="events">
        ${shown.map(
          (e) => html`<li key=${e.id}>
            <div class="event-head"><strong>${e.type}</strong> <${Time} stamp=${e.timestamp} /> <code class="id">${e.id}</code></div>
            <details><summary>Body<span class="visually-hidden"> of ${e.id}</span></summary>
              <pre>${JSON.stringify(e, null, 2)}</pre></details>
          </li>`,
        )}
      </ol>`}
    <//>
    <${ErrorNote} error=${error} />
    ${
      events && more
        ? html`<button type="button" onClick=${() => load(more)}>
            ${cursor.next ? 'Show more events' : 'Check for newer events'}</button>
          ${checked ? html`<p class="hint" role="status">No newer event yet.</p>` : null}`
        : null
    }
  </section>`;
}
