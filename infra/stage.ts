/**
 * Deployment stages. A closed set on purpose: a typo in `-c stage=prdo` must fail the synth, not
 * quietly create a third copy of the service with dev-style (destroyable) storage.
 */
export const stages = ['dev', 'prod'] as const;
export type Stage = (typeof stages)[number];

export const DEFAULT_STAGE: Stage = 'dev';

export function parseStage(value: unknown): Stage {
  if (value === undefined || value === null || value === '') return DEFAULT_STAGE;
  if (typeof value === 'string' && (stages as readonly string[]).includes(value)) return value as Stage;
  throw new Error(`Unknown stage ${JSON.stringify(value)}: use -c stage=${stages.join('|')}`);
}

/** Stages whose data must survive a `cdk destroy` or an accidental stack deletion. */
export const isProtected = (stage: Stage): boolean => stage === 'prod';

/** The stack name carries the stage so that dev and prod can live in the same account. */
export const stackNameFor = (stage: Stage): string => `ReferralApi-${stage}`;
