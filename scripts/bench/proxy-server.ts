/**
 * The DynamoDB call counter (`lib/local/dynamodb-counter.ts`) in a child process of the bench, so
 * its work never shares the stack's event loop; `environment.ts` calls its methods over IPC.
 */
import { type DynamoCounter, startDynamoCounter } from '../../lib/local/dynamodb-counter.ts';

const counter = await startDynamoCounter(process.argv[2] ?? '');
process.send?.({ ready: counter.endpoint });
type Method = 'snapshot' | 'record' | 'recorded' | 'track' | 'tracked';
process.on('message', ({ id, method }: { id: number; method: Method }) => {
  process.send?.({ id, value: (counter as DynamoCounter)[method]() });
});
// The parent went away: do not linger.
process.on('disconnect', () => process.exit(0));
