import { defineConfig } from 'vitest/config';

// A quiet `npm test`: the SDK's notice that its 2027 releases need Node 22 (this project runs on
// Node 20 and 22) would print once per worker and child process, which all inherit this setting.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // One local stack (DynamoDB Local, queue, gateway) for the whole run.
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 90_000,
        },
      },
      {
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          // Each file starts and breaks its own local stack (DynamoDB Local paused, killed).
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          // Holds every cloud assembly the files synthesise, and removes them all at the end.
          globalSetup: ['test/infra/global-setup.ts'],
          // One module registry per worker across the infra files: aws-cdk-lib loads once and the
          // memoised synths of test/infra/synth.ts (one per stage and variant) are shared, instead
          // of every file paying for its own. The files restore any environment they change.
          isolate: false,
          // Synthesis bundles every function with esbuild: slow on two cores.
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
