/**
 * One webhook POST, connected to exactly the address that `checkDestination` approved.
 *
 * `node:http(s).request` rather than `fetch`: its `lookup` option lets us answer the socket's DNS
 * query with the pre-checked address (no second resolution that a rebinding DNS server could
 * answer differently), while the Host header and TLS SNI/certificate check keep the original name.
 * It never follows redirects: a 3xx is returned as it is, and the caller treats it as a failure.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { type DestinationCheck, pinnedLookup } from './ssrf.ts';

export const ATTEMPT_TIMEOUT_MS = 15_000;
/** Bytes of the response body read (and then discarded): enough for a log line, bounded. */
const MAX_RESPONSE_BYTES = 16 * 1024;

type PostOutcome =
  | { kind: 'response'; status: number; retryAfter?: string; location?: string; bodyPreview: string }
  | { kind: 'error'; error: string };

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 50 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 50 }),
};

export function postWebhook(
  destination: Extract<DestinationCheck, { ok: true }>,
  headers: Record<string, string>,
  body: string,
  timeoutMs = ATTEMPT_TIMEOUT_MS,
): Promise<PostOutcome> {
  const { url, hostname, address } = destination;
  const secure = url.protocol === 'https:';
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const request = (secure ? https : http).request(
      {
        method: 'POST',
        protocol: url.protocol,
        hostname,
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers: {
          ...headers,
          host: url.host,
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'referral-api-webhooks/1',
        },
        agent: agents[secure ? 'https:' : 'http:'],
        lookup: pinnedLookup(address) as unknown as http.RequestOptions['lookup'],
        // SNI carries the name (never an IP literal); the certificate is checked against it.
        ...(secure && !isIP(hostname) ? { servername: hostname } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const header = (name: string) => {
            const v = response.headers[name];
            return Array.isArray(v) ? v[0] : v;
          };
          finish({
            kind: 'response',
            status: response.statusCode ?? 0,
            retryAfter: header('retry-after'),
            location: header('location'),
            bodyPreview: Buffer.concat(chunks).toString('utf8', 0, Math.min(size, 256)),
          });
        };
        response.on('data', (chunk: Buffer) => {
          if (size < MAX_RESPONSE_BYTES) chunks.push(chunk);
          size += chunk.length;
          if (size >= MAX_RESPONSE_BYTES) {
            done();
            response.destroy();
          }
        });
        response.on('end', done);
        // The status is what counts: a body cut short (timeout, reset) after it is still an answer.
        response.on('error', done);
        response.on('close', done);
      },
    );
    request.on('error', (err: NodeJS.ErrnoException) => {
      const timedOut = err.name === 'AbortError' || err.name === 'TimeoutError' || err.code === 'ABORT_ERR';
      finish({
        kind: 'error',
        error: timedOut ? `timeout after ${timeoutMs} ms` : (err.code ?? err.message),
      });
    });
    request.end(body);
  });
}
