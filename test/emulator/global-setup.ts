import type { TestProject } from 'vitest/node';
import { type RunningDynamo, startDynamoLocal } from '../../lib/local/dynamodb.ts';

let dynamo: RunningDynamo | undefined;

/**
 * A DynamoDB Local of the emulator project's own, in memory, for the files that check the local
 * stand-ins on tables of their own (the stream poller, the table upgrade, the gateway's
 * throttling): the integration run's traffic does not share it, so their timings are the
 * stand-ins' own. The files that run whole stacks (`npm start`) start their own JVMs.
 */
export async function setup(project: TestProject) {
  dynamo = await startDynamoLocal(undefined);
  project.provide('dynamodbEndpoint', dynamo.endpoint);
}

export async function teardown() {
  await dynamo?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The emulator project's DynamoDB Local. */
    dynamodbEndpoint: string;
  }
}
