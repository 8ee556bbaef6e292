/**
 * `GET /health` (public liveness, no dependency) and `GET /api/v1/health/ready` (an operator's
 * readiness check with a key: one read of the table). Their DynamoDB calls are counted in
 * round-trips.test.ts; what a down table gives is in dependency-failures.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { api } from '../support/api.ts';
import { expectError } from '../support/assertions.ts';

describe('GET /health', () => {
  it('answers 200 {"status":"ok"} without a key, never cached, and HEAD the same without a body', async () => {
    for (const key of [null, 'not-a-key']) {
      const res = await api('GET', '/health', { key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    const head = await api('HEAD', '/health', { key: null });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('refuses other methods with 405', async () => {
    expectError(await api('POST', '/health', { key: null, body: {} }), 405, 'method_not_allowed');
  });
});

describe('GET /api/v1/health/ready', () => {
  it('reads the table and answers 200 with the latency, with a key', async () => {
    const res = await api('GET', '/api/v1/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ready', checks: { dynamodb: { status: 'ok' } } });
    expect(res.body.checks.dynamodb.latency_ms).toBeGreaterThanOrEqual(0);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('is 401 without a valid key, like every /api/v1 route', async () => {
    expectError(await api('GET', '/api/v1/health/ready', { key: null }), 401, 'unauthorized');
    expectError(
      await api('GET', '/api/v1/health/ready', { key: 'rk_unknown-key-00000000000000' }),
      401,
      'unauthorized',
    );
  });
});
