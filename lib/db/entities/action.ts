/**
 * The action item.
 *
 *   PK `T#<tenant>#C#<campaign>`   SK `A#<id, 16 digits>`   no index keys
 *
 * In its campaign's partition, so it goes with the campaign's purge. No endpoint reads action items:
 * each carries its `action.created` event (`lib/domain/webhook-events.ts`), which the table stream
 * takes to the webhook queue, and the link it was recorded on.
 */
import type { Action } from '../../domain/link-schemas.ts';
import { formatTimestamp } from '../../domain/time.ts';
import { eventAttributes } from '../../domain/webhook-events.ts';
import { campaignPartition } from './campaign.ts';
import { type LinkAction, type LinkItem, toLink } from './link.ts';
import { toReferredUser } from './referred-user.ts';

export function actionKey(tenant: string, campaignId: string, id: number) {
  return { PK: campaignPartition(tenant, campaignId), SK: `A#${String(id).padStart(16, '0')}` };
}

/** The API object of an action on `link`, whose counters already include the action. */
export function toAction(link: LinkItem, action: LinkAction): Action {
  return {
    id: action.id,
    created_at: formatTimestamp(new Date(action.at)),
    action_type: action.action_type,
    metadata: action.metadata,
    referral_link: toLink(link),
    referred_user: action.referred_user ? toReferredUser(action.referred_user, link) : null,
  };
}

/** The stored action item: the API object as its event's data, and the link it was recorded on. */
export function newActionItem(link: LinkItem, action: LinkAction) {
  const data = toAction(link, action);
  const item = {
    ...actionKey(link.tenant, link.campaign_id, action.id),
    type: 'action',
    link_code: link.referral_code,
    ...eventAttributes('action.created', action.id, link.tenant, link.campaign_id, data, new Date(action.at)),
  };
  return { item, data };
}
