import { App } from 'aws-cdk-lib';
import { addReferralApiStack } from './stack.ts';

/**
 * CDK entry point (`cdk.json`). `-c stage=dev|prod` picks the stage, `dev` by default.
 *
 * The stack is environment-agnostic (no `env`): synth needs no AWS credentials and does no context
 * lookups; the account and region come from the deploying profile.
 */
addReferralApiStack(new App());
