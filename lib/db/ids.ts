import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.ts';
import { type IdKind, lastIdOf, sequenceKey } from './entities/sequence.ts';
import { db, tableName } from './table/client.ts';

export type { IdKind };

/**
 * Integer ids without a round trip per request: each warm function reserves a block of ids with
 * one atomic counter update and hands them out from memory. Ids are unique and positive across
 * the deployment; they are increasing per container, and a recycled container leaves a gap.
 */
const BLOCK_SIZE = config.idBlockSize;

interface Block {
  next: number;
  end: number; // inclusive
}

const blocks = new Map<IdKind, Block>();
const pending = new Map<IdKind, Promise<Block>>();

async function reserve(kind: IdKind): Promise<Block> {
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: sequenceKey(kind),
      UpdateExpression: 'ADD last_id :n SET #type = :type',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':n': BLOCK_SIZE, ':type': 'sequence' },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const end = lastIdOf(Attributes);
  if (!Number.isSafeInteger(end) || end < BLOCK_SIZE) throw new Error(`id sequence ${kind} returned ${end}`);
  return { next: end - BLOCK_SIZE + 1, end };
}

export async function nextId(kind: IdKind): Promise<number> {
  for (;;) {
    const block = blocks.get(kind);
    if (block && block.next <= block.end) return block.next++;
    // One reservation at a time per kind, shared by concurrent callers in this process.
    let p = pending.get(kind);
    if (!p) {
      p = reserve(kind).finally(() => pending.delete(kind));
      pending.set(kind, p);
      blocks.set(kind, await p);
    } else {
      await p;
    }
  }
}
