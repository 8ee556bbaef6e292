/** A campaign's frame: its name, address and id, and the tabs of its pages. */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { type Campaign, get } from '../api.ts';
import { ErrorNote, Heading, Time } from '../ui.ts';

/** A campaign's pages, in the order of its tabs: the route's last segment and the tab's label. */
export const TABS = [
  ['overview', '', 'Overview'],
  ['links', '/links', 'Links'],
  ['users', '/users', 'Referred users'],
  ['rewards', '/rewards', 'Rewards'],
  ['deliveries', '/deliveries', 'Deliveries'],
  ['events', '/events', 'Events'],
  ['settings', '/settings', 'Settings'],
] as const;
export type Tab = (typeof TABS)[number][0];

function CampaignNav({ id, current }: { id: string; current: Tab }) {
  return html`<nav aria-label="Campaign" class="tabs">
    <ul>
      ${TABS.map(
        ([name, path, label]) =>
          html`<li key=${name}><a href="#/campaigns/${id}${path}" aria-current=${current === name ? 'page' : undefined}
            >${label}</a></li>`,
      )}
    </ul>
  </nav>`;
}

/** What a campaign's page is given: the campaign, and how to show it changed (a rename, a new secret). */
export type CampaignView = (campaign: Campaign, update: (c: Campaign) => void) => unknown;

export function CampaignPage({
  id,
  current,
  children,
}: {
  id: string;
  current: Tab;
  children: CampaignView;
}) {
  const [campaign, setCampaign] = useState<Campaign | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<Campaign>('campaign', { id }).then(setCampaign, setError);
  }, [id]);
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
            ${children(campaign, setCampaign)}`
    }
  </main>`;
}
