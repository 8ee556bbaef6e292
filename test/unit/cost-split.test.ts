/**
 * The bench's cost model gives each run the items whose key names its campaign
 * (`scripts/bench/capacity.ts`): an event lookup names its campaign only through its event id, and
 * a conversion's names it inside the conversion id. Visits and actions write no lookup item, so
 * none of a sale's may be charged to them.
 */
import { describe, expect, it } from 'vitest';
import { conversionId } from '../../lib/db/entities/conversion.ts';
import { visitKey } from '../../lib/db/entities/visit.ts';
import { eventLookupKey, feedKey } from '../../lib/db/entities/webhook-event.ts';
import { actionEventId, conversionEventId } from '../../lib/domain/webhook-events.ts';
import type { ItemAccesses } from '../../lib/local/dynamodb-counter.ts';
import { splitByCampaign } from '../../scripts/bench/capacity.ts';

const tenant = 'acme';
const visits = '3f0c2a9e-4b1d-4c5e-9f00-0123456789ab';
const sales = 'A1B2C3D4-0000-4000-8000-00000000FFFF';
const put = { 'BatchWriteItem:Put': 1 };
const accessed = (key: { PK: string; SK: string }, counts: Record<string, number> = put): ItemAccesses => ({
  pk: key.PK,
  sk: key.SK,
  counts,
});
const lookup = (eventId: string) => accessed(eventLookupKey(tenant, eventId));
const runs = [
  { id: visits, codes: [] },
  { id: sales, codes: [] },
];

describe("the cost model's split of tracked items by campaign", () => {
  it("gives a sale's and its refunds' event lookups to the sale's campaign, none to the visits'", () => {
    const cv = conversionId({ campaignId: sales, createdMs: Date.UTC(2026, 10, 27), n: 4242 });
    const tracked = [
      accessed(visitKey(tenant, visits, 17), { PutItem: 1 }),
      accessed(feedKey(tenant, sales, '0000000000000001'), { 'TransactWriteItems:Put': 1 }),
      lookup(conversionEventId(cv)),
      lookup(conversionEventId(cv, 1)),
      lookup(conversionEventId(cv, 12)),
    ];
    const [ofVisits, ofSales] = splitByCampaign(tracked, runs);
    expect(ofVisits!.map((i) => i.pk)).toEqual([visitKey(tenant, visits, 17).PK]);
    expect(ofSales!.filter((i) => i.pk.includes('#EVT#'))).toHaveLength(3);
  });

  it("gives an action's lookup (older events had one) to its campaign", () => {
    const tracked = [lookup(actionEventId(9, visits)), accessed(feedKey(tenant, sales, '1'))];
    const [ofVisits, ofSales] = splitByCampaign(tracked, runs);
    expect(ofVisits!.map((i) => i.pk)).toEqual([eventLookupKey(tenant, actionEventId(9, visits)).PK]);
    expect(ofSales!.some((i) => i.pk.includes('#EVT#'))).toBe(false);
  });

  it("shares out a signup's lookup, which names no campaign, by each run's writes", () => {
    const tracked = [
      accessed(visitKey(tenant, visits, 1), { PutItem: 3 }),
      accessed(feedKey(tenant, sales, '1'), { PutItem: 1 }),
      lookup('evt_referred_user_77'),
    ];
    const [ofVisits, ofSales] = splitByCampaign(tracked, runs);
    const share = (items: ItemAccesses[]) => items.find((i) => i.pk.includes('#EVT#'))?.counts;
    expect(share(ofVisits!)).toEqual({ 'BatchWriteItem:Put': 0.75 });
    expect(share(ofSales!)).toEqual({ 'BatchWriteItem:Put': 0.25 });
  });
});
