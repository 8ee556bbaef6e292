/**
 * The DynamoDB call counter (`lib/local/dynamodb-counter.ts`): its categories and counts, and the
 * per-item accesses it keeps while tracking, against a stand-in for DynamoDB (a plain HTTP
 * server answering `{}`, or a 400 for a body that asks for one), so no Java is needed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardKey, seriesKey, typeRegistryKey } from '../../lib/db/entities/analytics.ts';
import {
  feedCounterItem,
  feedSequenceKey,
  newEventLookupItem,
  newFeedPackItem,
  nextFeedCounter,
} from '../../lib/db/entities/webhook-event.ts';
import {
  categorize,
  type DynamoCounter,
  itemAccessesOf,
  startDynamoCounter,
  updatedAttributes,
} from '../../lib/local/dynamodb-counter.ts';

const key = (pk: string, sk: string) => ({ PK: { S: pk }, SK: { S: sk } });

describe('itemAccessesOf', () => {
  it('reads the key of each single-item call, with the consistency of reads', () => {
    expect(
      itemAccessesOf('GetItem', JSON.stringify({ Key: key('LINK#A', 'LINK'), ConsistentRead: true })),
    ).toEqual([{ pk: 'LINK#A', sk: 'LINK', access: 'GetItem (consistent)' }]);
    expect(itemAccessesOf('GetItem', JSON.stringify({ Key: key('LINK#A', 'LINK') }))).toEqual([
      { pk: 'LINK#A', sk: 'LINK', access: 'GetItem' },
    ]);
    expect(itemAccessesOf('PutItem', JSON.stringify({ Item: { ...key('P', 'S'), n: { N: '1' } } }))).toEqual([
      { pk: 'P', sk: 'S', access: 'PutItem' },
    ]);
    expect(itemAccessesOf('UpdateItem', JSON.stringify({ Key: key('P', 'S') }))[0]?.access).toBe(
      'UpdateItem',
    );
    expect(itemAccessesOf('DeleteItem', JSON.stringify({ Key: key('P', 'S') }))[0]?.access).toBe(
      'DeleteItem',
    );
  });

  it('records the attributes an update writes, names resolved, so the cost model knows which index copies it rewrites', () => {
    const update = {
      Key: key('LINK#A', 'LINK'),
      UpdateExpression:
        'ADD total_clicks :one SET last_action = :a, #held = if_not_exists(#held, :now) REMOVE x.y[2], #z',
      ExpressionAttributeNames: { '#held': 'idem_abc', '#z': 'zed' },
    };
    expect(itemAccessesOf('UpdateItem', JSON.stringify(update))[0]?.access).toBe(
      'UpdateItem [idem_abc last_action total_clicks x zed]',
    );
    expect(
      updatedAttributes({ UpdateExpression: 'set a = list_append(a, :l), b.c = :v delete s :set' }),
    ).toEqual(['a', 'b', 's']);
    expect(
      updatedAttributes({
        UpdateExpression: 'SET #offset = :add',
        ExpressionAttributeNames: { '#offset': 'o' },
      }),
    ).toEqual(['o']);
    const transaction = {
      TransactItems: [{ Update: { Key: key('L', 'L'), UpdateExpression: 'ADD n :one' } }],
    };
    expect(itemAccessesOf('TransactWriteItems', JSON.stringify(transaction))[0]?.access).toBe(
      'TransactWriteItems:Update [n]',
    );
  });

  it('reads every item of batches and transactions', () => {
    const batchWrite = {
      RequestItems: {
        t: [{ PutRequest: { Item: key('A', '1') } }, { DeleteRequest: { Key: key('B', '2') } }],
      },
    };
    expect(itemAccessesOf('BatchWriteItem', JSON.stringify(batchWrite))).toEqual([
      { pk: 'A', sk: '1', access: 'BatchWriteItem:Put' },
      { pk: 'B', sk: '2', access: 'BatchWriteItem:Delete' },
    ]);
    const batchGet = { RequestItems: { t: { Keys: [key('A', '1'), key('B', '2')], ConsistentRead: true } } };
    expect(itemAccessesOf('BatchGetItem', JSON.stringify(batchGet)).map((a) => a.access)).toEqual([
      'BatchGetItem (consistent)',
      'BatchGetItem (consistent)',
    ]);
    const transaction = {
      TransactItems: [
        { Put: { TableName: 't', Item: key('A', '1') } },
        { Update: { TableName: 't', Key: key('LINK#X', 'LINK') } },
        { Delete: { TableName: 't', Key: key('C', '3') } },
        { ConditionCheck: { TableName: 't', Key: key('T#t#C#c', 'CAMPAIGN') } },
      ],
    };
    expect(itemAccessesOf('TransactWriteItems', JSON.stringify(transaction))).toEqual([
      { pk: 'A', sk: '1', access: 'TransactWriteItems:Put' },
      { pk: 'LINK#X', sk: 'LINK', access: 'TransactWriteItems:Update' },
      { pk: 'C', sk: '3', access: 'TransactWriteItems:Delete' },
      { pk: 'T#t#C#c', sk: 'CAMPAIGN', access: 'TransactWriteItems:ConditionCheck' },
    ]);
  });

  it('gives nothing for calls that touch no item by key, or bodies that are not JSON', () => {
    expect(itemAccessesOf('Query', JSON.stringify({ KeyConditionExpression: 'PK = :pk' }))).toEqual([]);
    expect(itemAccessesOf('DescribeTable', '{"TableName":"t"}')).toEqual([]);
    expect(itemAccessesOf('PutItem', 'not json')).toEqual([]);
  });
});

describe('categorize (unchanged)', () => {
  it('tells the authorizer, id blocks, stream polls and floors apart from requests', () => {
    expect(
      categorize('GetItem', 'DynamoDB_20120810', JSON.stringify({ Key: key('APIKEY#x', 'APIKEY') })),
    ).toBe('apikey');
    expect(
      categorize('UpdateItem', 'DynamoDB_20120810', JSON.stringify({ Key: key('SEQ#link', 'SEQ') })),
    ).toBe('idblock');
    expect(categorize('GetRecords', 'DynamoDBStreams_20120810', '{}')).toBe('stream');
    expect(categorize('GetItem', 'DynamoDB_20120810', '{}', 'aws-sdk bench-floor')).toBe('floor');
    expect(categorize('GetItem', 'DynamoDB_20120810', JSON.stringify({ Key: key('LINK#A', 'LINK') }))).toBe(
      'request',
    );
  });
});

describe("categorize: the stream consumer's feed and rollup calls are no request's", () => {
  const event = {
    event_id: 'evt_action_1',
    event_type: 'action.created' as const,
    event_time: '2026-11-24T00:00:00.000Z',
    event_json: '{}',
    tenant: 't',
    campaign_id: 'c',
  };
  const wire = (item: object) => marshall(item, { removeUndefinedValues: true });
  it('tells the feed (counter reads and transactions, lookup batches) and the rollups (checkpoints, ranking reads) apart', () => {
    const counter = feedCounterItem('t', 'c', nextFeedCounter(undefined, 2, 'shard', '1', 0));
    const cases: Array<[string, object, string]> = [
      ['GetItem', { Key: wire(feedSequenceKey('t', 'c')) }, 'feed'],
      [
        'TransactWriteItems',
        {
          TransactItems: [
            { Put: { Item: wire(counter) } },
            { Put: { Item: wire(newFeedPackItem([event], 2)) } },
          ],
        },
        'feed',
      ],
      [
        'BatchWriteItem',
        { RequestItems: { table: [{ PutRequest: { Item: wire(newEventLookupItem(event)) } }] } },
        'feed',
      ],
      // The counting consumer: writes under a high-water mark, analytics items, its registry and
      // board reads, window marks, parked work, its batch reads of campaigns and of links' counts.
      [
        'UpdateItem',
        {
          Key: wire(seriesKey('t', 'c', { kind: 'campaign' }, '2026-11-24')),
          ExpressionAttributeNames: { '#hw': 'hw_abc' },
        },
        'rollup',
      ],
      [
        'UpdateItem',
        { Key: wire({ PK: 'LINK#A', SK: 'LINK' }), ExpressionAttributeNames: { '#hw': 'hw_x' } },
        'rollup',
      ],
      ['UpdateItem', { Key: wire(typeRegistryKey('t', 'c')) }, 'rollup'],
      ['GetItem', { Key: wire(typeRegistryKey('t', 'c')), ConsistentRead: true }, 'rollup'],
      ['GetItem', { Key: wire(boardKey('t', 'c', 'referrer', 'visits')), ConsistentRead: true }, 'rollup'],
      ['PutItem', { Item: wire({ ...boardKey('t', 'c', 'referrer', 'visits'), version: 1 }) }, 'rollup'],
      ['GetItem', { Key: wire({ PK: 'WINDOW#shard', SK: 'MARK' }) }, 'rollup'],
      ['PutItem', { Item: wire({ PK: 'PARKED', SK: 'counted#x' }) }, 'rollup'],
      [
        'BatchGetItem',
        {
          RequestItems: { table: { Keys: [wire({ PK: 'T#t#C#c', SK: 'CAMPAIGN' })], ConsistentRead: false } },
        },
        'rollup',
      ],
      [
        'BatchGetItem',
        {
          RequestItems: {
            table: {
              Keys: [wire({ PK: 'LINK#A', SK: 'LINK' })],
              ProjectionExpression: '#p0, #p1, #p2',
              ExpressionAttributeNames: { '#p0': 'PK', '#p1': 'SK', '#p2': 'an_v' },
            },
          },
        },
        'rollup',
      ],
      // Endpoint 17's read of a board and the campaign check stay a request's.
      ['GetItem', { Key: wire(boardKey('t', 'c', 'referrer', 'visits')) }, 'request'],
      [
        'BatchGetItem',
        {
          RequestItems: { table: { Keys: [wire({ PK: 'T#t#C#c', SK: 'CAMPAIGN' })], ConsistentRead: true } },
        },
        'request',
      ],
      // A request's own batch write (the delivery log) and its transactions stay requests.
      [
        'BatchWriteItem',
        { RequestItems: { table: [{ PutRequest: { Item: wire({ PK: 'T#t#C#c#WH', SK: '1' }) } }] } },
        'request',
      ],
      [
        'TransactWriteItems',
        { TransactItems: [{ Update: { Key: wire({ PK: 'LINK#A', SK: 'LINK' }) } }] },
        'request',
      ],
    ];
    for (const [op, body, category] of cases)
      expect(categorize(op, 'DynamoDB_20120810', JSON.stringify(body)), `${op} ${JSON.stringify(body)}`).toBe(
        category,
      );
  });
});

describe('the counter on the wire', () => {
  let upstream: Server;
  let counter: DynamoCounter;
  const send = (op: string, body: object, service = 'DynamoDB_20120810') =>
    fetch(counter.endpoint, {
      method: 'POST',
      headers: { 'x-amz-target': `${service}.${op}`, 'content-type': 'application/x-amz-json-1.0' },
      body: JSON.stringify(body),
    }).then((r) => r.status);

  beforeAll(async () => {
    // DynamoDB's stand-in: `{}` for every call, a 400 for a body that asks for one.
    upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        res.writeHead(body.includes('"fail"') ? 400 : 200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    counter = await startDynamoCounter(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    await counter.stop();
    await new Promise((r) => upstream.close(r));
  });

  it('counts calls by category and operation whether or not items are tracked', async () => {
    const before = counter.snapshot().counts;
    expect(await send('GetItem', { Key: key('LINK#A', 'LINK') })).toBe(200);
    expect(await send('GetRecords', {}, 'DynamoDBStreams_20120810')).toBe(200);
    const after = counter.snapshot().counts;
    expect((after['request:GetItem'] ?? 0) - (before['request:GetItem'] ?? 0)).toBe(1);
    expect((after['stream:GetRecords'] ?? 0) - (before['stream:GetRecords'] ?? 0)).toBe(1);
  });

  it('tracks the items successful calls touch, only between track() and tracked()', async () => {
    await send('UpdateItem', { Key: key('LINK#A', 'LINK') }); // before tracking: not counted
    counter.track();
    await send('UpdateItem', { Key: key('LINK#A', 'LINK') });
    await send('TransactWriteItems', {
      TransactItems: [
        { Update: { Key: key('LINK#A', 'LINK') } },
        { ConditionCheck: { Key: key('T#t#C#c', 'CAMPAIGN') } },
      ],
    });
    await send('GetItem', { Key: key('LINK#A', 'LINK'), ConsistentRead: true });
    // A failed call touched nothing: counted as failed, not per item.
    expect(await send('PutItem', { Item: key('LINK#A', 'LINK'), fail: { S: 'fail' } })).toBe(400);
    const items = counter.tracked();
    await send('UpdateItem', { Key: key('LINK#A', 'LINK') }); // after tracked(): not counted
    expect(items).toEqual(
      expect.arrayContaining([
        {
          pk: 'LINK#A',
          sk: 'LINK',
          counts: { UpdateItem: 1, 'TransactWriteItems:Update': 1, 'GetItem (consistent)': 1 },
        },
        { pk: 'T#t#C#c', sk: 'CAMPAIGN', counts: { 'TransactWriteItems:ConditionCheck': 1 } },
      ]),
    );
    expect(items).toHaveLength(2);
    expect(counter.tracked()).toEqual([]);
    expect(counter.snapshot().counts['failed:PutItem']).toBe(1);
  });
});
