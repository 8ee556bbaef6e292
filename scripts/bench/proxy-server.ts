/** The DynamoDB call counter in a child process of the bench (`environment.ts` asks it over IPC). */
import { type DynamoCounter, startDynamoCounter } from '../../lib/local/dynamodb-counter.ts';

const counter = await startDynamoCounter(process.argv[2] ?? '');
type Method = 'snapshot' | 'record' | 'recorded' | 'track' | 'tracked';
process.on('message', ({ id, method }: { id: number; method: Method }) => {
  process.send?.({ id, value: (counter as DynamoCounter)[method]() });
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: counter.endpoint });
