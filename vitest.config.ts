import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.ts';

// A quiet `npm test`: the SDK's notice that its 2027 releases need Node 22 (this project runs on
// Node 20 and 22) would print once per worker and child process, which all inherit this setting.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// Every DynamoDB Local the run starts (the shared stack's, the ones of files with a stack of their
// own, those of `npm start` children) inherits this: the C1 compiler alone and the serial
// collector. On 2 cores the JVM's optimising compiler and parallel GC threads compete with
// everything else; measured on this machine, a start took half the CPU (2.4 s instead of 4.6 s)
// and 2,000 puts 2.6 s of CPU instead of 7 s. The files that start many stacks start them faster.
const JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];
process.env.JAVA_TOOL_OPTIONS = [
  ...(process.env.JAVA_TOOL_OPTIONS ?? '').split(' ').filter((o) => o && !JVM_FLAGS.includes(o)),
  ...JVM_FLAGS,
].join(' ');

// The run's start slots (test/support/start-slots.ts): at most two stacks start at once.
if (!process.env.TEST_START_SLOTS_DIR) {
  const slots = mkdtempSync(join(tmpdir(), 'referrals-test-starts-'));
  process.env.TEST_START_SLOTS_DIR = slots;
  process.on('exit', () => rmSync(slots, { recursive: true, force: true }));
}

/**
 * Vitest runs the projects of one `sequence.groupOrder` side by side, sharing one worker count,
 * and the groups one after the other (docs/testing.md has the measurements):
 *
 * 1. Files that mostly wait (on the table stream's batching window, webhook retries, a JVM's
 *    start): integration, local-stack. More workers than the 2 cores of CI, since a waiting
 *    file costs no CPU; not more than 4: the files of `integration` share one stack, whose
 *    DynamoDB Local answers one request at a time, and with 6 it fell behind the handlers' 4 s
 *    attempt timeout more often (the API answers 503): with 6, 13 tests failed and the tests
 *    took 1,003 s; with 4, 5 and 753 s (two runs on the same machine, busy with other work).
 * 2. Files that compute and time nothing (unit, infra): one worker per core. `npm test`
 *    (scripts/test.ts) runs these projects in a vitest of their own beside the others, at the
 *    lowest CPU priority, so they take only the CPU the other files leave idle.
 * 3. The local stand-ins' own promises (emulator): sub-second figures, but files that mostly wait
 *    on a window or a poll, a fraction of a core together; side by side among themselves only.
 * 4. Files that time the product under stress (faults: answers against their budgets while
 *    DynamoDB is out; latency: delays under a flood or a storm of failing receivers): alone, one
 *    file at a time, so that no other file of the run takes the CPU they are measured with.
 */
const WAITING = { maxWorkers: 4, sequence: { groupOrder: 0 } };
const COMPUTING = { maxWorkers: 2, sequence: { groupOrder: 1 } };
const STAND_INS = { maxWorkers: 4, sequence: { groupOrder: 2 } };
const ALONE = { maxWorkers: 1, sequence: { groupOrder: 3 } };

/**
 * `npm test` (scripts/test.ts) runs two vitests at once: TEST_PART=computing has only the
 * projects of the second group, at the lowest CPU priority; TEST_PART=others has the rest.
 */
const PART = process.env.TEST_PART;
const inPart = (project: { test: { sequence: { groupOrder: number } } }) =>
  !PART || (project.test.sequence.groupOrder === COMPUTING.sequence.groupOrder) === (PART === 'computing');

/**
 * At the lowest priority these files may wait minutes for a core while the others run (on a
 * machine busy with other work, far longer: a bundling synth waited over 15 min at load 30):
 * their timeouts only guard against a hang, and they measure nothing.
 */
const COMPUTE_TIMEOUT = PART === 'computing' ? 3_600_000 : undefined;

export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // One local stack (DynamoDB Local, queue, gateway) for the whole run, shared by the files
          // running side by side: each makes campaigns of its own. A file whose work would change
          // the stack for the others starts one of its own (test/support/own-stack.ts).
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 90_000,
          ...WAITING,
        },
      },
      {
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          // Each file breaks a DynamoDB of its own (a stack whose DynamoDB Local it pauses, or
          // endpoints that never answer), and times the answers against their budgets: alone,
          // as the stand-ins' timings are (beside the first group, the outage's own stack missed
          // its start and measurement budgets in three runs of five on a busy machine).
          testTimeout: 180_000,
          hookTimeout: 180_000,
          ...ALONE,
        },
      },
      {
        test: {
          name: 'latency',
          include: ['test/latency/**/*.test.ts'],
          // Delays the contract bounds (a visit in total_clicks within 2 s during another tenant's
          // flood, a healthy campaign's first attempt within 1 s among failing receivers), each on
          // a stack of its own. Beside the first group's files on 2 cores they missed by 1-2 s in
          // about one run of three, the product unchanged: alone, as the faults are.
          testTimeout: 300_000,
          hookTimeout: 180_000,
          ...ALONE,
        },
      },
      {
        test: {
          name: 'local-stack',
          include: ['test/local-stack/**/*.test.ts'],
          // `npm start` as a user runs it: child processes with JVMs and data directories of their
          // own, started, signalled, killed and restarted.
          testTimeout: 180_000,
          hookTimeout: 180_000,
          ...WAITING,
        },
      },
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // One module registry per worker across the unit files, as for infra: each file no longer
          // loads lib/, the SDK and the compiled validators anew (measured: 51 s of CPU for the
          // project with a registry per file, 28 s without). The files restore what they change
          // (environment, spies, timers, Date.now).
          isolate: false,
          // Property tests run thousands of cases: seconds of CPU, more on a shared 2-core machine.
          testTimeout: COMPUTE_TIMEOUT ?? 30_000,
          hookTimeout: COMPUTE_TIMEOUT ?? 10_000,
          ...COMPUTING,
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
          testTimeout: COMPUTE_TIMEOUT ?? 300_000,
          hookTimeout: COMPUTE_TIMEOUT ?? 300_000,
          ...COMPUTING,
        },
      },
      {
        test: {
          name: 'emulator',
          include: ['test/emulator/**/*.test.ts'],
          // A DynamoDB Local of the project's own for the files on tables of their own.
          globalSetup: ['test/emulator/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          ...STAND_INS,
        },
      },
    ].filter(inPart),
  },
});
