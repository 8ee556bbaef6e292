/**
 * The dashboard: sign in with an api key, campaigns, and a campaign's pages (overview, links,
 * referred users, rewards, webhook deliveries, events, settings; `pages/`). Routes live in the URL's
 * fragment (`#/campaigns/<id>/links`), so one page serves them all; the api key never appears
 * there (`api.ts`).
 */
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Campaign, session } from './api.ts';
import { CampaignPage, TABS, type Tab } from './pages/campaign.ts';
import { Campaigns, SignIn } from './pages/campaigns.ts';
import { Links } from './pages/links.ts';
import { Overview } from './pages/overview.ts';
import { Rewards } from './pages/rewards.ts';
import { Settings } from './pages/settings.ts';
import { ReferredUsers } from './pages/users.ts';
import { Deliveries, Events } from './pages/webhooks.ts';
import { UUID } from './ui.ts';

type Route = { name: 'campaigns' } | { name: 'campaign'; id: string; tab: Tab };

function parseRoute(hash: string): Route {
  const m = /^#\/campaigns\/([^/]+)(\/[a-z]+)?$/.exec(hash);
  const tab = TABS.find(([, path]) => path === (m?.[2] ?? ''));
  if (m?.[1] && UUID.test(m[1]) && tab) return { name: 'campaign', id: m[1], tab: tab[0] };
  return { name: 'campaigns' };
}

/** Each tab's content, given the campaign and how to show a change of it. */
const VIEWS: Record<Tab, (c: Campaign, update: (c: Campaign) => void) => unknown> = {
  overview: (c) => html`<${Overview} campaign=${c} />`,
  links: (c) => html`<${Links} campaign=${c} />`,
  users: (c) => html`<${ReferredUsers} campaign=${c} />`,
  rewards: (c) => html`<${Rewards} campaign=${c} />`,
  deliveries: (c) => html`<${Deliveries} campaign=${c} />`,
  events: (c) => html`<${Events} campaign=${c} />`,
  settings: (c, update) => html`<${Settings} campaign=${c} update=${update} />`,
};

function App() {
  const [route, setRoute] = useState<Route>(parseRoute(window.location.hash));
  const [signedIn, setSignedIn] = useState(session.key() !== null);
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  // Why the sign-in form shows, when the API refused the key rather than the user signing out.
  const [refused, setRefused] = useState(false);
  useEffect(
    () =>
      session.onRefused(() => {
        setRefused(true);
        setSignedIn(false);
      }),
    [],
  );
  const signOut = () => {
    session.signOut();
    setRefused(false);
    setSignedIn(false);
  };
  const signedInNow = () => {
    setRefused(false);
    setSignedIn(true);
  };
  let content: unknown;
  if (!signedIn) content = html`<${SignIn} onSignedIn=${signedInNow} refused=${refused} />`;
  else if (route.name === 'campaigns') content = html`<${Campaigns} key="campaigns" />`;
  else
    content = html`<${CampaignPage} key=${`${route.tab}${route.id}`} id=${route.id} current=${route.tab}
      children=${VIEWS[route.tab]} />`;
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
