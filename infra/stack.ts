import { type App, Aws, CfnOutput, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { type RouteDefinition, routes as routeTable } from '../lib/routes.ts';
import { ApiFunctions } from './functions.ts';
import { ReferralHttpApi } from './http-api.ts';
import { parseStage, type Stage, stackNameFor } from './stage.ts';
import { ReferralTable } from './table.ts';

export interface ReferralApiStackProps extends StackProps {
  readonly stage: Stage;
  /**
   * The route table to deploy. Always `lib/routes.ts` in the app; tests pass a table with rows the
   * real one does not have yet (public, HEAD) to exercise those paths of the wiring.
   */
  readonly routes?: readonly RouteDefinition[];
}

/**
 * The whole service for one stage. The table, the functions and the API are public properties so
 * that later constructs (webhook delivery, purge, alarms) can be added next to them.
 */
export class ReferralApiStack extends Stack {
  readonly stage: Stage;
  readonly table: dynamodb.Table;
  readonly functions: ApiFunctions;
  readonly api: ReferralHttpApi;

  constructor(scope: Construct, id: string, props: ReferralApiStackProps) {
    super(scope, id, props);
    this.stage = props.stage;
    const routes = props.routes ?? routeTable;
    // Tags on every resource (not only the stack) so cost reports can split by service and stage.
    Tags.of(this).add('service', 'referral-api');
    Tags.of(this).add('stage', props.stage);

    this.table = new ReferralTable(this, 'Storage', { stage: props.stage }).table;

    this.functions = new ApiFunctions(this, 'Functions', {
      stage: props.stage,
      table: this.table,
      routes,
    });

    this.api = new ReferralHttpApi(this, 'Api', {
      stage: props.stage,
      routes,
      routeFunctions: this.functions.byRoute,
      authorizerFunction: this.functions.authorizer,
      fallbackFunction: this.functions.fallback,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the HTTP API' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'DynamoDB table' });
    // No key exists after the first deploy; this is the exact command to issue one.
    new CfnOutput(this, 'CreateApiKeyCommand', {
      value: `npm run api-key -- create --tenant <name> --table ${this.table.tableName} --region ${Aws.REGION}`,
      description: 'Issue an api key for a tenant against this stage',
    });
  }

  /** Every Lambda function of the stack. */
  get allFunctions(): NodejsFunction[] {
    return this.functions.all;
  }
}

/**
 * Adds the stack for the stage named by the `stage` context value (`dev` when unset). `infra/app.ts`
 * and the infra tests both build the app through here, so the tests check what `cdk synth` makes.
 */
export function addReferralApiStack(
  app: App,
  options: { routes?: readonly RouteDefinition[] } = {},
): ReferralApiStack {
  const stage = parseStage(app.node.tryGetContext('stage'));
  return new ReferralApiStack(app, stackNameFor(stage), {
    stage,
    routes: options.routes,
    description: `Referral tracking API (${stage})`,
  });
}
