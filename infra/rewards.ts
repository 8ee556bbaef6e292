import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { type FunctionDefaults, serviceFunction } from './functions.ts';
import { REWARD_RELEASE_GRANT } from './grant-lists.ts';
import { grantTable } from './grants.ts';

export interface RewardsProps extends FunctionDefaults {
  readonly table: dynamodb.ITable;
}

/** How often the release runs: a reward is approved within about this long after its hold ends. */
export const REWARD_RELEASE_RATE = Duration.minutes(1);
/** One run: pages of the due index until none is left; the next run goes on with the rest. */
export const REWARD_RELEASE_TIMEOUT = Duration.seconds(50);

/**
 * The rewards' scheduled release (docs/rewards.md): an EventBridge rule runs
 * `functions/scheduled/release-rewards.ts` every minute, which approves every `pending` reward
 * whose hold has ended, found through the sparse due index (GSI1 `REWARDS_DUE`). A run that
 * fails is simply followed by the next one a minute later (the work is all in the index), so the
 * target retries nothing itself; the function's errors alarm like every monitored function's.
 */
export class Rewards extends Construct {
  readonly releaseFunction: NodejsFunction;
  readonly releaseRule: events.Rule;

  constructor(scope: Construct, id: string, props: RewardsProps) {
    super(scope, id);
    const { table, stage } = props;
    this.releaseFunction = serviceFunction(this, 'ReleaseFunction', {
      stage,
      tracing: props.tracing,
      logEncryptionKey: props.logEncryptionKey,
      handler: 'scheduled/release-rewards',
      timeout: REWARD_RELEASE_TIMEOUT,
      description: `Approves rewards whose hold has ended (${stage})`,
      environment: { TABLE_NAME: table.tableName },
    });
    grantTable(this.releaseFunction, table, REWARD_RELEASE_GRANT);
    this.releaseRule = new events.Rule(this, 'ReleaseSchedule', {
      description: `Runs the rewards' release every minute (${stage})`,
      schedule: events.Schedule.rate(REWARD_RELEASE_RATE),
      targets: [new targets.LambdaFunction(this.releaseFunction, { retryAttempts: 0 })],
    });
  }
}
