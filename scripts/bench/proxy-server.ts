/**
 * The bench's DynamoDB call counter (`lib/local/dynamodb-counter.ts`) run as a child process by
 * `counting-proxy.ts`, so its work never shares the stack's event loop: it answers the parent's
 * snapshot and recording requests over IPC.
 */
import { startDynamoCounter } from '../../lib/local/dynamodb-counter.ts';

const counter = await startDynamoCounter(process.argv[2] ?? '');
process.send?.({ type: 'ready', endpoint: counter.endpoint });
process.on('message', (message: { type: string; id: number }) => {
  if (message.type === 'record') counter.record();
  else if (message.type === 'recorded')
    process.send?.({ type: 'recorded', id: message.id, calls: counter.recorded() });
  else if (message.type === 'snapshot')
    process.send?.({ type: 'snapshot', id: message.id, ...counter.snapshot() });
  else if (message.type === 'stop') void counter.stop().then(() => process.disconnect?.());
});
// The parent went away: do not linger.
process.on('disconnect', () => process.exit(0));
