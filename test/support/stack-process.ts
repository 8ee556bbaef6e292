/**
 * `npm start` as a user runs it, for the tests that start, signal and restart whole stacks:
 * `node --import tsx scripts/start.ts` (the script's command) as a child process with its own
 * port and data directory, without npm in between, so a signal goes to exactly that process (or,
 * sent to its process group, to it and its DynamoDB Local JVM, as a terminal's Ctrl-C does).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { takeStartSlot } from './start-slots.ts';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const START_TIMEOUT = 90_000;
/** What `npm start` prints once it serves. */
const READY_LINE = 'Press Ctrl-C to stop.';

/** Settings the integration run's own stack put into this process's environment. */
export const STACK_ENV = [
  'PORT',
  'DATA_DIR',
  'DEV_API_KEYS',
  'DYNAMODB_ENDPOINT',
  'WEBHOOK_RETRY_DELAYS',
  'TABLE_NAME',
  'PUBLIC_BASE_URL',
  'STAGE',
  'ALLOW_PRIVATE_WEBHOOKS',
  'WEBHOOK_QUEUE_URL',
  'AWS_ENDPOINT_URL_SQS',
  'LOG_LEVEL',
];

export interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitFor: (pattern: RegExp) => Promise<RegExpMatchArray>;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

let javaTmp: string | undefined;

/**
 * `JAVA_TOOL_OPTIONS` that give DynamoDB Local's JVM a temporary directory of these tests: on disk
 * it unpacks its SQLite library into `java.io.tmpdir` and, killed with SIGKILL, never removes it.
 * The directory goes with the data directories in `cleanUpStacks`.
 */
export function javaToolOptions(): string {
  if (!javaTmp) {
    javaTmp = mkdtempSync(join(tmpdir(), 'referrals-java-'));
    dirs.push(javaTmp);
  }
  return [process.env.JAVA_TOOL_OPTIONS, `-Djava.io.tmpdir=${javaTmp}`].filter(Boolean).join(' ');
}

/**
 * Start `npm start` with `env` once a start slot is free (`start-slots.ts`); the slot is given
 * back when it is ready (its "Press Ctrl-C" line) or has exited.
 */
export async function start(env: Record<string, string>): Promise<Started> {
  const release = await takeStartSlot();
  const childEnv: NodeJS.ProcessEnv = { ...process.env, JAVA_TOOL_OPTIONS: javaToolOptions() };
  for (const name of STACK_ENV) delete childEnv[name];
  Object.assign(childEnv, env);
  // Its own process group, so a Ctrl-C can be sent to the group the way a terminal does.
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.push(child);
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout?.on('data', (d: Buffer) => {
    out += d;
    if (out.includes(READY_LINE)) release();
    for (const w of waiters) w();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  void exit.then(release);
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolveWait, reject) => {
      const check = () => {
        const m = out.match(pattern);
        if (m) {
          waiters.delete(check);
          clearTimeout(timer);
          resolveWait(m);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${pattern} within ${START_TIMEOUT} ms\nstdout:\n${out}\nstderr:\n${err}`));
      }, START_TIMEOUT);
      waiters.add(check);
      void exit.then(({ code, signal }) => {
        if (!waiters.has(check)) return;
        waiters.delete(check);
        clearTimeout(timer);
        reject(new Error(`exited (${code ?? signal}) before ${pattern}\nstdout:\n${out}\nstderr:\n${err}`));
      });
      check();
    });
  return { child, stdout: () => out, stderr: () => err, exit, waitFor };
}

/** Pids of Java processes whose command line mentions `dir` (DynamoDB Local's -dbPath). */
export function javaPidsFor(dir: string): number[] {
  const ps = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return ps
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes(dir) && /\bjava\b/.test(line))
    .map((line) => Number(line.split(/\s+/, 1)[0]));
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'referrals-local-stack-'));
  dirs.push(dir);
  return dir;
}

/** Wait for "Press Ctrl-C" and read the base URL, DynamoDB endpoint and printed keys. */
export async function ready(s: Started) {
  await s.waitFor(/Press Ctrl-C to stop\./);
  const text = s.stdout();
  const baseUrl = text.match(/listening on (http:\/\/\S+)/)?.[1];
  const dynamodbEndpoint = text.match(/DynamoDB: (http:\/\/\S+)/)?.[1];
  const keys = [...text.matchAll(/api-key for tenant "([^"]+)": (\S+)/g)].map((m) => ({
    tenant: m[1] as string,
    key: m[2] as string,
  }));
  return { baseUrl: baseUrl as string, dynamodbEndpoint: dynamodbEndpoint as string, keys };
}

/** SIGKILL the stack's whole process group (Node and its JVM), and wait until both are gone. */
export async function killGroup(s: Started, dir: string): Promise<void> {
  process.kill(-(s.child.pid as number), 'SIGKILL');
  await s.exit;
  for (const end = Date.now() + 10_000; javaPidsFor(dir).length > 0 && Date.now() < end; ) {
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** For `afterAll`: kill every stack still running and remove the data directories. */
export function cleanUpStacks(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
