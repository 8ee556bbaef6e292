/** Key builders: the only place that knows how items are keyed. See `lib/table-definition.ts`. */

// A tenant name is free text from the key registry; ids are UUIDs or integers. `#` separates parts,
// and tenant names are restricted (see api-keys) so that no part can contain it.
export const keys = {
  campaign: (tenant: string, campaignId: string) => ({
    PK: campaignPartition(tenant, campaignId),
    SK: 'CAMPAIGN' as const,
  }),
  sequence: (kind: string) => ({ PK: `SEQ#${kind}`, SK: 'SEQ' }),
};

export function campaignPartition(tenant: string, campaignId: string): string {
  return `T#${tenant}#C#${campaignId.toLowerCase()}`;
}
