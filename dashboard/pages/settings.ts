/**
 * A campaign's settings: its name, its webhook (URL, the event types sent, enabled or disabled),
 * a test event sent now, a new signing secret, and deleting the campaign. The two that cannot be
 * taken back (a rotation, a deletion) are styled as risky and ask for a confirmation first.
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import {
  type Campaign,
  del,
  EVENT_TYPES,
  type EventType,
  patch,
  post,
  type WebhookTestResult,
} from '../api.ts';
import { count } from '../format.ts';
import { CopyButton, ErrorNote, go, inputValue, useSubmit } from '../ui.ts';

type Props = { campaign: Campaign; update: (c: Campaign) => void };

const change = (campaign: Campaign, body: Partial<Campaign>) =>
  patch<Campaign>('campaign', body, { id: campaign.id });

/** A one-line confirmation under a form, read out when it appears. */
const Saved = ({ text }: { text: string }) =>
  text ? html`<p class="notice" role="status">${text}</p>` : null;

function Rename({ campaign, update }: Props) {
  const [name, setName] = useState(campaign.name);
  const [done, setDone] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    setDone('');
    update(await change(campaign, { name: name.trim() }));
    setDone('Renamed.');
  });
  return html`<section aria-labelledby="rename-title" class="card">
    <h2 id="rename-title">Name</h2>
    <form onSubmit=${submit}>
      <label for="rename">Campaign name</label>
      <input id="rename" required maxlength="256" value=${name} onInput=${(e: Event) => setName(inputValue(e))} />
      <button type="submit" disabled=${busy}>${busy ? 'Renaming…' : 'Rename'}</button>
    </form>
    <${ErrorNote} error=${error} /><${Saved} text=${done} />
  </section>`;
}

function Webhook({ campaign, update }: Props) {
  const [url, setUrl] = useState(campaign.webhook_url ?? '');
  const [events, setEvents] = useState<EventType[]>(campaign.webhook_events);
  const [done, setDone] = useState('');
  const save = useSubmit(async () => {
    setDone('');
    const body: Partial<Campaign> = { webhook_url: url.trim() || null };
    // The filter needs at least one type; with no URL there is nothing to filter.
    if (events.length > 0) body.webhook_events = events;
    update(await change(campaign, body));
    setDone(url.trim() ? 'Webhook saved.' : 'Webhook removed: no events are sent.');
  });
  const status = useSubmit(async () => {
    setDone('');
    const next = campaign.webhook_status === 'enabled' ? 'disabled' : 'enabled';
    update(await change(campaign, { webhook_status: next }));
    setDone(next === 'enabled' ? 'Deliveries enabled again.' : 'Deliveries paused: events stay in the feed.');
  });
  const toggle = (type: EventType) =>
    setEvents(events.includes(type) ? events.filter((t) => t !== type) : [...events, type]);
  const disabled = campaign.webhook_status === 'disabled';
  return html`<section aria-labelledby="webhook-title" class="card">
    <h2 id="webhook-title">Webhook</h2>
    <div class="status-row">
      <p>
        Status: <strong class=${disabled ? 'bad' : 'good'}>${disabled ? 'disabled' : 'enabled'}</strong>
        ${disabled && campaign.webhook_disabled_reason ? ` — ${campaign.webhook_disabled_reason}` : ''}
      </p>
      ${
        campaign.webhook_url
          ? html`<button type="button" class="secondary" disabled=${status.busy} onClick=${() => status.submit()}>
              ${disabled ? 'Enable deliveries again' : 'Pause deliveries'}
            </button>`
          : null
      }
    </div>
    <${ErrorNote} error=${status.error} />
    <form onSubmit=${save.submit}>
      <label for="webhook-url">Webhook URL <span class="optional">(empty: send nothing)</span></label>
      <input id="webhook-url" type="url" maxlength="2048" spellcheck="false" placeholder="https://example.com/hooks/referrals"
        value=${url} onInput=${(e: Event) => setUrl(inputValue(e))} />
      <fieldset class="checks">
        <legend>Events to send</legend>
        ${EVENT_TYPES.map(
          (e) => html`<label key=${e.type}>
            <input type="checkbox" checked=${events.includes(e.type)} onChange=${() => toggle(e.type)} /> ${e.label}
          </label>`,
        )}
      </fieldset>
      ${events.length === 0 ? html`<p class="hint">Choose at least one event type.</p>` : null}
      <button type="submit" disabled=${save.busy || events.length === 0}>${save.busy ? 'Saving…' : 'Save webhook'}</button>
    </form>
    <${ErrorNote} error=${save.error} /><${Saved} text=${done} />
  </section>`;
}

function TestWebhook({ campaign }: { campaign: Campaign }) {
  const [result, setResult] = useState<WebhookTestResult | null>(null);
  const { busy, error, submit } = useSubmit(async () => {
    setResult(null);
    setResult(await post<WebhookTestResult>('campaign/webhook_test', undefined, { id: campaign.id }));
  });
  return html`<section aria-labelledby="test-title" class="card">
    <h2 id="test-title">Test event</h2>
    <p>Sends one signed <code>webhook.test</code> event to the webhook URL now and shows what it answered.</p>
    ${
      campaign.webhook_url
        ? html`<button type="button" disabled=${busy} onClick=${() => submit()}>${busy ? 'Sending…' : 'Send a test event'}</button>`
        : html`<p class="empty">Set a webhook URL above first.</p>`
    }
    <${ErrorNote} error=${error} />
    ${
      result
        ? html`<p class=${result.delivered ? 'notice' : 'error'} role="status">
            ${result.delivered ? 'Delivered' : 'Not delivered'}${
              result.status_code === null ? ', no answer' : `: HTTP ${result.status_code}`
            }${` in ${count(result.duration_ms)} ms`}${result.error ? ` — ${result.error}` : ''}
          </p>`
        : null
    }
  </section>`;
}

function Secret({ campaign, update }: Props) {
  const [fresh, setFresh] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const { busy, error, submit } = useSubmit(async () => {
    const rotated = await post<Campaign>('campaign/rotate_webhook_secret', undefined, { id: campaign.id });
    update(rotated);
    setFresh(rotated.webhook_secret);
    setConfirming(false);
  });
  return html`<section aria-labelledby="secret-title" class="card">
    <h2 id="secret-title">Signing secret</h2>
    ${
      campaign.webhook_secret
        ? html`<p>
              Deliveries are signed with it (Standard Webhooks). ${' '}
              <${CopyButton} text=${campaign.webhook_secret} label="the signing secret" />
            </p>
            ${
              confirming
                ? html`<div class="confirm" role="group" aria-labelledby="rotate-question">
                    <p id="rotate-question"><strong>Rotate the signing secret?</strong> A new secret takes over at once. For 24
                      hours deliveries carry signatures of both; after that, a receiver that still checks the old secret
                      refuses every delivery.</p>
                    <div class="confirm-buttons">
                      <button type="button" class="danger" disabled=${busy} onClick=${() => submit()}>
                        ${busy ? 'Rotating…' : 'Yes, rotate the secret'}</button>
                      <button type="button" class="secondary" disabled=${busy} onClick=${() => setConfirming(false)}>Cancel</button>
                    </div>
                  </div>`
                : html`<button type="button" class="danger-outline" onClick=${() => setConfirming(true)}>Rotate the secret…</button>`
            }`
        : html`<p class="empty">None yet: the first webhook URL you save creates it.</p>`
    }
    <${ErrorNote} error=${error} />
    ${
      fresh
        ? html`<div class="notice" role="status">
            <p>The new secret, shown this once: put it in your receiver.</p>
            <p class="secret-row"><code class="secret">${fresh}</code> <${CopyButton} text=${fresh} label="the new secret" /></p>
          </div>`
        : null
    }
  </section>`;
}

/**
 * Deleting the campaign: gone at once from every endpoint with its links (their share URLs stop
 * working), referred users and events. Confirmed by typing its name, so no stray click does it.
 */
function DeleteCampaign({ campaign }: { campaign: Campaign }) {
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    await del('campaign', { id: campaign.id });
    go('#/');
  });
  const matches = typed.trim() === campaign.name.trim();
  return html`<section aria-labelledby="delete-title" class="card danger-zone">
    <h2 id="delete-title">Delete the campaign</h2>
    <p>Deletes the campaign with all its links, referred users, actions and events, at once and for good. Its share
      URLs stop working; webhooks stop.</p>
    ${
      confirming
        ? html`<form onSubmit=${(e: Event) => (matches ? submit(e) : e.preventDefault())}>
            <label for="delete-confirm">Type the campaign's name, <strong>${campaign.name}</strong>, to confirm</label>
            <input id="delete-confirm" autocomplete="off" spellcheck="false" value=${typed}
              onInput=${(e: Event) => setTyped(inputValue(e))} />
            <div class="confirm-buttons">
              <button type="submit" class="danger" disabled=${busy || !matches}>${busy ? 'Deleting…' : 'Delete this campaign'}</button>
              <button type="button" class="secondary" disabled=${busy} onClick=${() => {
                setConfirming(false);
                setTyped('');
              }}>Cancel</button>
            </div>
          </form>`
        : html`<button type="button" class="danger-outline" onClick=${() => setConfirming(true)}>Delete the campaign…</button>`
    }
    <${ErrorNote} error=${error} />
  </section>`;
}

export function Settings(props: Props) {
  return html`<div class="two">
      <${Rename} ...${props} />
      <${Secret} ...${props} />
    </div>
    <${Webhook} ...${props} />
    <${TestWebhook} campaign=${props.campaign} />
    <${DeleteCampaign} campaign=${props.campaign} />`;
}
