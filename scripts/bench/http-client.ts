/** The bench's HTTP client: node:http over keep-alive sockets (one unless told), leaner than fetch. */
import { Agent, request } from 'node:http';

export type Response = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
};
export type RequestSpec = { method: string; path: string; headers?: Record<string, string>; body?: unknown };
export type BenchClient = ReturnType<typeof benchClient>;

/** A client of the gateway at `baseUrl`, sending `apiKey` on every path but the redirect's. */
export function benchClient(baseUrl: string, apiKey: string, sockets = 1) {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const send = (spec: RequestSpec, retried = false): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
      const headers: Record<string, string> = { ...spec.headers };
      if (!spec.path.startsWith('/r/')) headers['api-key'] = apiKey;
      if (body) headers['content-type'] = 'application/json';
      const req = request(`${baseUrl}${spec.path}`, { method: spec.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the gateway closed (its 5 s idle timeout) as this went out: Node's
        // documented remedy is to send it again on a new socket, once.
        if (req.reusedSocket && err.code === 'ECONNRESET' && !retried) send(spec, true).then(resolve, reject);
        else reject(err);
      });
      req.end(body);
    });
  return {
    send,
    /** Send and insist on a 2xx; the parsed JSON body. */
    async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await send({ method, path, body });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
      return (res.body ? JSON.parse(res.body) : undefined) as T;
    },
    close: () => agent.destroy(),
  };
}
