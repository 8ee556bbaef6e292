/**
 * A minimal keep-alive HTTP client for the bench (node:http, one socket): less overhead between
 * the measurement and the gateway than fetch, and the same client for every endpoint.
 */
import { Agent, request } from 'node:http';

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RequestSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}

export class BenchClient {
  private readonly agent: Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(
    baseUrl: string,
    private readonly apiKey?: string,
    sockets = 1,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets });
    const url = new URL(baseUrl);
    this.host = url.hostname;
    this.port = Number(url.port);
  }

  send(spec: RequestSpec): Promise<Response> {
    const body = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body));
    const headers: Record<string, string | number> = { ...(spec.headers ?? {}) };
    if (this.apiKey && !spec.path.startsWith('/r/')) headers['api-key'] = this.apiKey;
    if (body) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = body.length;
    }
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.host,
          port: this.port,
          method: spec.method,
          path: spec.path,
          headers,
          agent: this.agent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Send and insist on a status; returns the parsed JSON body (or undefined when empty). */
  async expect<T = Record<string, unknown>>(spec: RequestSpec, status: number): Promise<T> {
    const res = await this.send(spec);
    if (res.status !== status) {
      throw new Error(
        `${spec.method} ${spec.path}: expected ${status}, got ${res.status} ${res.body.slice(0, 300)}`,
      );
    }
    return (res.body ? JSON.parse(res.body) : undefined) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}
