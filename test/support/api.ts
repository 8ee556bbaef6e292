/**
 * The one HTTP client of the tests: `api(...)` for the run's own stack (the integration project's
 * global setup), `apiAt(baseUrl, key)` for a stack a test starts itself (faults, isolation,
 * throttling, restarts). JSON in and out, the raw text kept for empty-body checks, redirects not
 * followed. Every response is checked against the OpenAPI document (status, required headers,
 * media type, body schema) and a mismatch throws, so a handler that drifts from the document fails
 * the test whatever it asserts. `rawRequest` is the same client for the bytes fetch would
 * normalise or add (content type, `..` segments, duplicate headers).
 */
import { request } from 'node:http';
import { TENANT_A } from './global-setup.ts';
import { ResponseValidator } from './response-validator.ts';
import { runStack } from './run-stack.ts';

export { TENANT_A, TENANT_B } from './global-setup.ts';

/** The local gateway of the file's stack (the run's, or one of its own: `run-stack.ts`). */
export const baseUrl = () => runStack().baseUrl;

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
  /** `Date.now()` when the status and headers arrived (for latencies measured from a 201). */
  at: number;
}

interface ApiOptions {
  body?: unknown;
  /** Sent as is instead of `body` (no content type added unless `headers` has one). */
  rawBody?: string;
  /** The api-key header: the client's key when undefined, none when null. */
  key?: string | null;
  headers?: Record<string, string>;
  idempotencyKey?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: tests read response fields without declaring a type per call
export type Api = <T = any>(method: string, path: string, options?: ApiOptions) => Promise<ApiResponse<T>>;

let documentValidator: ResponseValidator | undefined;

function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text; // not JSON; keep the text
  }
}

/** A client of the stack at `target.baseUrl` (read per request), with `target.key` by default. */
export function apiClient(target: { baseUrl: string | (() => string); key?: string }): Api {
  // Built with the client, not on its first answer: a test timing its requests (throttling's
  // token buckets) must not see the document's compilation between two of them.
  documentValidator ??= new ResponseValidator();
  const validator = documentValidator;
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? target.key : options.key;
    if (key != null) headers['api-key'] = key;
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const base = typeof target.baseUrl === 'function' ? target.baseUrl() : target.baseUrl;
    const res = await fetch(`${base}${path}`, { method, headers, body, redirect: 'manual' });
    const at = Date.now();
    const text = await res.text();
    validator.check({ method, path, status: res.status, headers: res.headers, text });
    return { status: res.status, headers: res.headers, body: parseBody(text) as never, text, at };
  };
}

/** A client of another stack (one a test started), with `key` by default. */
export const apiAt = (base: string, key?: string): Api => apiClient({ baseUrl: base, key });

/** The run's stack, as tenant A unless `key` says otherwise. */
export const api: Api = apiClient({ baseUrl, key: TENANT_A.key });

/**
 * A request with exactly these bytes, path and headers (nothing added but Host and length), to the
 * run's stack. Not checked against the document: these requests are malformed on purpose.
 */
export function rawRequest(
  method: string,
  path: string,
  options: { headers?: Record<string, string | string[]>; body?: string | Buffer } = {},
): Promise<ApiResponse> {
  const url = new URL(baseUrl());
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          ...options.headers,
          ...(options.body !== undefined ? { 'content-length': Buffer.byteLength(options.body) } : {}),
        },
      },
      (res) => {
        const at = Date.now();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
          }
          resolve({ status: res.statusCode ?? 0, headers, body: parseBody(text), text, at });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/**
 * A POST as a careful client makes it under load: one Idempotency-Key for all its tries, tried
 * again after a 503 (a busy machine's DynamoDB Local can be slow; the contract says retry with the
 * same key) or a 409 `idempotency_key_in_progress`, a jittered 200–500 ms apart (shorter than
 * the `Retry-After: 1` a real client would wait, to keep tests quick), until an answer that is
 * neither. `abandon` ends it with a TypeError (the stack is being killed), as a lost connection
 * does; `withinMs` bounds the whole.
 */
export async function postAsClient(
  client: Api,
  path: string,
  body: unknown,
  options: { abandon?: () => boolean; withinMs?: number } = {},
  // biome-ignore lint/suspicious/noExplicitAny: as for Api, tests read the answer's fields untyped
): Promise<ApiResponse<any>> {
  const idempotencyKey = crypto.randomUUID();
  const deadline = Date.now() + (options.withinMs ?? 60_000);
  for (;;) {
    const res = await client('POST', path, { body, idempotencyKey });
    const busy =
      res.status === 503 || (res.status === 409 && res.body?.error?.code === 'idempotency_key_in_progress');
    if (!busy) return res;
    if (options.abandon?.()) throw new TypeError('abandoned while retrying');
    if (Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
  }
}
