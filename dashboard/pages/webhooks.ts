/**
 * A campaign's webhook traffic: the delivery log (every attempt, newest first, by status) with a
 * redeliver button per event, and the events feed (every event, newest first, by type, its body on
 * demand).
 */
import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { type Campaign, type Delivery, type FeedEvent, page, post } from '../api.ts';
import { count } from '../format.ts';
import { ErrorNote, inputValue, Loaded, ScrollBox, Time, useCursorPages, useSubmit } from '../ui.ts';

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
  return html`<button type="button" class="small" data-primary disabled=${busy} onClick=${() => submit()}>
      Redeliver<span class="visually-hidden"> ${delivery.event_id}</span>
    </button><${ErrorNote} error=${error} />`;
}

const answerOf = (d: Delivery) =>
  [d.status_code === null ? null : `HTTP ${d.status_code}`, d.error].filter(Boolean).join(' — ') ||
  'no answer';

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
      ${(shown: Delivery[]) => html`<${ScrollBox} label="Delivery attempts"><table class="deliveries stack">
        <caption class="visually-hidden">Delivery attempts, newest first, page ${index + 1}</caption>
        <thead><tr>
          <th scope="col">When</th><th scope="col">Event</th><th scope="col">Status</th>
          <th scope="col">Answer</th><th scope="col">Next attempt</th>
          <th scope="col" class="actions"><span class="visually-hidden">Actions</span></th>
        </tr></thead>
        <tbody>
          ${shown.map(
            (d) => html`<tr key=${d.id}>
              <td data-label="When"><${Time} stamp=${d.attempted_at} /></td>
              <td data-label="Event" class="event">${d.event_type}<br /><code class="id">${d.event_id}</code></td>
              <td data-label="Status"><span class="status ${d.status}">${d.status}</span><br /><span class="muted">attempt ${d.attempt}</span></td>
              <td data-label="Answer" class="answer">${answerOf(d)}<br /><span class="muted">in ${count(d.duration_ms)} ms</span></td>
              <td data-label="Next attempt">${d.next_attempt_at ? html`<${Time} stamp=${d.next_attempt_at} />` : '—'}</td>
              <td class="actions"><${Redeliver} delivery=${d} onQueued=${setQueued} /></td>
            </tr>`,
          )}
        </tbody>
      </table><//>`}
    <//>
    ${rows && (rows.length > 0 || index > 0) ? pager('Pages of delivery attempts') : null}
  </section>`;
}

/** Feed pages are read this large while going to the end of the feed. */
const FEED_PAGE = 1000;
/** At most this many pages are read in one go (50,000 events): beyond, the reader asks to go on. */
const FEED_PAGES_AT_ONCE = 50;
/** The newest this many events are kept in the page. */
const FEED_KEPT = 5000;

/** What an event is, for people: a signup, the action's own type (`visit`, `purchase`…) or the event type. */
export const kindOf = (e: FeedEvent): string => {
  if (e.type === 'referred_user.created') return 'signup';
  const actionType = (e.data as { action_type?: unknown } | undefined)?.action_type;
  return e.type === 'action.created' && typeof actionType === 'string' ? actionType : e.type;
};

/**
 * The events feed, newest first. The API's feed (endpoint 19) is oldest first, made for consumers
 * that poll for what is new; so the page reads it to its end (1,000 events a request, 50 requests
 * at most in one go: a campaign's 30 days rarely hold more), keeps the newest 5,000 and shows them
 * newest first, 25 at a time, filtered by kind. "Check for newer events" asks with the feed's
 * `x-poll-cursor` and puts what came since on top.
 */
export function Events({ campaign }: { campaign: Campaign }) {
  const [events, setEvents] = useState<FeedEvent[] | null>(null);
  const [cursor, setCursor] = useState<{ next: string | null; poll: string | null }>({
    next: null,
    poll: null,
  });
  const [error, setError] = useState<unknown>(null);
  const [reading, setReading] = useState(false);
  const [checked, setChecked] = useState(false);
  const [kind, setKind] = useState('');
  const [shownCount, setShownCount] = useState(PAGE_SIZE);
  const read = useCallback(
    async (from?: string, checking = false) => {
      setError(null);
      setReading(true);
      let at = from;
      let found = 0;
      try {
        for (let n = 0; n < FEED_PAGES_AT_ONCE; n++) {
          const p = await page<FeedEvent>(`events/${campaign.id}`, { limit: FEED_PAGE, cursor: at });
          found += p.items.length;
          // Oldest first on the wire: the newest go on top of what is shown.
          setEvents((shown) => [...[...p.items].reverse(), ...(shown ?? [])].slice(0, FEED_KEPT));
          setCursor({ next: p.next, poll: p.poll });
          if (!p.next) break;
          at = p.next;
        }
        setEvents((shown) => shown ?? []);
        setChecked(checking && found === 0);
      } catch (failure) {
        setError(failure);
      } finally {
        setReading(false);
      }
    },
    [campaign.id],
  );
  useEffect(() => {
    read();
  }, [read]);
  const kinds = [...new Set((events ?? []).map(kindOf))].sort();
  const filtered = (events ?? []).filter((e) => !kind || kindOf(e) === kind);
  return html`<section aria-labelledby="events-title" class="card">
    <div class="section-head">
      <h2 id="events-title">Events</h2>
      <div class="inline-fields">
        <label>Type <select value=${kind} onChange=${(e: Event) => {
          setKind(inputValue(e));
          setShownCount(PAGE_SIZE);
        }}>
          <option value="">all</option>
          ${kinds.map((k) => html`<option key=${k} value=${k}>${k}</option>`)}
        </select></label>
        ${
          cursor.poll && !cursor.next
            ? html`<button type="button" class="secondary small" disabled=${reading}
                onClick=${() => read(cursor.poll ?? undefined, true)}>Check for newer events</button>`
            : null
        }
      </div>
    </div>
    <p class="sub">Every event of the last 30 days, newest first: exactly the webhook bodies, sent or not. Each visit, action and
      signup is one.</p>
    ${checked ? html`<p class="hint" role="status">No newer event yet.</p>` : null}
    ${
      cursor.next && !reading
        ? html`<p class="notice" role="status">More than ${count(FEED_PAGE * FEED_PAGES_AT_ONCE)} events were read and the
            feed goes on: the newest are not shown yet.
            <button type="button" class="small" onClick=${() => read(cursor.next ?? undefined)}>Keep reading</button></p>`
        : null
    }
    <${Loaded} data=${events === null ? null : filtered} error=${null}
      empty=${kind ? `No ${kind} event. Choose "all" to see every event.` : 'No event yet. Each visit through a link and each signup adds one.'}>
      ${(shown: FeedEvent[]) => html`<ol class="events">
        ${shown.slice(0, shownCount).map(
          (e) => html`<li key=${e.id}>
            <div class="event-head"><strong class="kind">${kindOf(e)}</strong> <span class="muted">${e.type}</span>
              <${Time} stamp=${e.timestamp} /> <code class="id">${e.id}</code></div>
            <details><summary>Body<span class="visually-hidden"> of ${e.id}</span></summary>
              <pre>${JSON.stringify(e, null, 2)}</pre></details>
          </li>`,
        )}
      </ol>
      ${
        shown.length > shownCount
          ? html`<button type="button" onClick=${() => setShownCount(shownCount + PAGE_SIZE)}>Show older events</button>`
          : null
      }`}
    <//>
    <${ErrorNote} error=${error} />
  </section>`;
}
