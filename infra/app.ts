import { App } from 'aws-cdk-lib';
import { addNagChecks } from './nag.ts';
import { addReferralApiStack } from './stack.ts';

/**
 * CDK entry point (`cdk.json`). `-c stage=dev|prod` picks the stage, `dev` by default; the other
 * context keys are in `infra/settings.ts` and the README.
 *
 * The stack is environment-agnostic (no `env`): synth needs no AWS credentials and does no context
 * lookups; the account and region come from the deploying profile. cdk-nag's AwsSolutions checks
 * run on every synth: an unsuppressed finding is an error and fails it.
 */
const app = new App();
addReferralApiStack(app);
addNagChecks(app);
