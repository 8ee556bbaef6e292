import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lib/openapi/document.ts';
import { routes } from '../../lib/routes.ts';
import { api } from '../support/api.ts';

describe('GET /api/v1/openapi.json', () => {
  it('serves the generated document without an api-key', async () => {
    const res = await api('GET', '/api/v1/openapi.json', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(openApiDocument)));
    for (const route of routes) expect(res.body.paths[route.path][route.method.toLowerCase()]).toBeDefined();
  });

  it('also answers with a key, and only to GET', async () => {
    expect((await api('GET', '/api/v1/openapi.json')).status).toBe(200);
    const post = await api('POST', '/api/v1/openapi.json', { body: {} });
    expect(post.status).toBe(405);
  });
});

describe('GET /docs', () => {
  it('serves the reference page without an api-key, with the document embedded and a strict CSP', async () => {
    const res = await api('GET', '/docs', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(
      /default-src 'none'; script-src 'self' 'sha256-/,
    );
    expect(res.text).toContain('<script type="application/json" id="openapi-document">');
    expect(res.text).toMatch(/<script src="docs\?asset=redoc\.standalone\.js&amp;v=[^"]+"><\/script>/);
    expect(res.text).not.toMatch(/(?:src|href)="(?:https?:)?\/\//); // nothing loaded from another host
  });

  it('serves the Redoc bundle gzipped and cacheable, and refuses unknown assets', async () => {
    const res = await api('GET', '/docs?asset=redoc.standalone.js&v=x', {
      key: null,
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(res.text.length).toBeGreaterThan(500_000); // fetch undid the gzip
    expect(res.text).toContain('Redoc');

    const unknown = await api('GET', '/docs?asset=../../etc/passwd', { key: null });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('validation_failed');
  });

  it('sends the page uncompressed to a client that does not take gzip', async () => {
    const res = await api('GET', '/docs', { key: null, headers: { 'accept-encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(res.text).toMatch(/^<!doctype html>/);
  });
});
