/**
 * At most `START_SLOTS` local stacks of the run start at once, across its worker processes. A
 * start is seconds of CPU (a JVM, the handlers' modules): a dozen at once on 2 cores, as the files
 * side by side asked for them, made some wait longer than DynamoDB Local's 60 s start deadline.
 * Running stacks are not limited, only their starts.
 *
 * A slot is a directory made atomically under the run's own directory (vitest.config.ts names it
 * in TEST_START_SLOTS_DIR); it holds the pid of its owner, so a slot whose owner died (a worker
 * killed on a timeout) is taken back.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const START_SLOTS = 2;
/** vitest.config.ts makes one for the run; a process outside vitest has slots of its own. */
const dir = process.env.TEST_START_SLOTS_DIR ?? join(tmpdir(), `referrals-test-starts-${process.pid}`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function tryTake(slot: string): boolean {
  try {
    mkdirSync(slot, { recursive: false });
  } catch {
    const owner = Number(readFileSafe(join(slot, 'pid')));
    if (owner && !alive(owner)) rmSync(slot, { recursive: true, force: true });
    return false;
  }
  writeFileSync(join(slot, 'pid'), String(process.pid));
  return true;
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Waits for a free slot; the returned function gives it back (once). */
export async function takeStartSlot(): Promise<() => void> {
  mkdirSync(dir, { recursive: true });
  for (;;) {
    for (let i = 0; i < START_SLOTS; i++) {
      const slot = join(dir, `slot-${i}`);
      if (tryTake(slot)) {
        let held = true;
        return () => {
          if (held) rmSync(slot, { recursive: true, force: true });
          held = false;
        };
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs `start` in a slot, given back when it settles. */
export async function inStartSlot<T>(start: () => Promise<T>): Promise<T> {
  const release = await takeStartSlot();
  try {
    return await start();
  } finally {
    release();
  }
}
