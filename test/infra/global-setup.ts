import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

/**
 * One temporary directory for every cloud assembly the infra tests synthesise (`tempOutdir()` in
 * `synth.ts`), removed when the run ends. The assemblies cannot go earlier: the synths are memoised
 * across the files of a worker (`isolate: false`) and the bundle tests read the assets from them.
 * Without this, each run left a `referral-cdk-*` or `cdk.out*` folder per synth in the temp
 * directory, a few MB each.
 */
export function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), 'referral-infra-tests-'));
  project.provide('infraTempRoot', root);
  return () => rmSync(root, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    infraTempRoot: string;
  }
}
