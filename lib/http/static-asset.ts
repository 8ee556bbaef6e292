/** Static files served by a function (the reference page, the dashboard): gzip when the client takes it. */
import type { HttpResult } from './responses.ts';

export interface StaticAsset {
  gzip: () => Buffer;
  /** The uncompressed body, for the rare client that does not accept gzip. */
  plain: () => Buffer;
}

/** Whether the client takes gzip: named, or covered by `*`, with a non-zero q. */
export function acceptsGzip(header: string | undefined): boolean {
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    if ((coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0)) return true;
  }
  return false;
}

/** A 200 with `asset`, gzipped if the client takes it, and `headers`. */
export function sendAsset(
  acceptEncoding: string | undefined,
  asset: StaticAsset,
  headers: Record<string, string>,
): HttpResult {
  const gzip = acceptsGzip(acceptEncoding);
  return {
    status: 200,
    headers: {
      vary: 'accept-encoding',
      'x-content-type-options': 'nosniff',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      ...headers,
    },
    bytes: gzip ? asset.gzip() : asset.plain(),
  };
}
