import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { logger, REDACTED, redactSecrets } from '../../lib/observability/logger.ts';
import { BusinessMetric, countEvent, metrics, publishMetrics } from '../../lib/observability/metrics.ts';
import { countDeliveries } from '../../lib/webhooks/metrics.ts';

const API_KEY = `rk_${'A1b2C3d4E5'.repeat(4)}xyz`;
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/**
 * Everything written to stdout (logs, EMF) or, with `stderr`, also to stderr (warnings and
 * errors) while `fn` runs.
 */
async function stdoutOf(fn: () => unknown, options: { stderr?: boolean } = {}): Promise<string> {
  const chunks: string[] = [];
  const capture = (chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  };
  const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(capture)];
  if (options.stderr) spies.push(vi.spyOn(process.stderr, 'write').mockImplementation(capture));
  try {
    await fn();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return chunks.join('');
}

describe('logger: credentials are never written', () => {
  it('masks credential keys and credential-looking values', () => {
    expect(redactSecrets('api-key', API_KEY)).toBe(REDACTED);
    expect(redactSecrets('webhook_secret', SECRET)).toBe(REDACTED);
    expect(redactSecrets('authorization', 'Bearer x')).toBe(REDACTED);
    expect(redactSecrets('webhook_secret', null)).toBeNull();
    expect(redactSecrets('message', `key ${API_KEY} refused`)).toBe(`key ${REDACTED} refused`);
    expect(redactSecrets('body', `{"webhook_secret":"${SECRET}"}`)).toBe(`{"webhook_secret":"${REDACTED}"}`);
    expect(redactSecrets('route', 'GET /api/v1/campaign')).toBe('GET /api/v1/campaign');
  });

  it('applies to whole log lines, errors and child loggers included', async () => {
    // The level may come from the environment (the integration run sets LOG_LEVEL=WARN); this
    // test needs the info line written.
    const level = logger.getLevelName();
    logger.setLogLevel('INFO');
    onTestFinished(() => logger.setLogLevel(level));
    const out = await stdoutOf(
      () => {
        logger.info('request', { headers: { 'api-key': API_KEY }, campaign: { webhook_secret: SECRET } });
        logger.error('unhandled error', new Error(`bad key ${API_KEY}`));
        logger.createChild().warn(`secret ${SECRET}`);
      },
      { stderr: true },
    );
    expect(out).toContain('unhandled error');
    expect(out).not.toContain(API_KEY);
    expect(out).not.toContain(SECRET);
    expect(out.split(REDACTED).length - 1).toBeGreaterThanOrEqual(4);
  });
});

describe('logger: one JSON line per entry, in the shape Powertools Logger writes', () => {
  it('writes level, message, timestamp, service and the keys; warnings and errors to stderr; below the level nothing', async () => {
    const level = logger.getLevelName();
    onTestFinished(() => logger.setLogLevel(level));
    logger.setLogLevel('INFO');
    const child = logger.createChild();
    child.appendKeys({ request_id: 'req-1' });
    const out = await stdoutOf(() => {
      child.debug('not written');
      child.info('request', { status: 201 });
      logger.setLogLevel('ERROR');
      child.warn('not written either');
    });
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'INFO',
      message: 'request',
      service: 'referral-api',
      request_id: 'req-1',
      status: 201,
    });
    expect(new Date(lines[0].timestamp).toISOString()).toBe(lines[0].timestamp);
    logger.setLogLevel('INFO');
    child.resetKeys();
    const err = new Error('boom');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    onTestFinished(() => stderr.mockRestore());
    expect(await stdoutOf(() => child.error('failed', { error: err }))).toBe('');
    const both = String(stderr.mock.calls[0]?.[0]);
    const line = JSON.parse(both);
    expect(line).not.toHaveProperty('request_id');
    expect(line.error).toMatchObject({ name: 'Error', message: 'boom' });
    expect(line.error.location).toMatch(/observability\.test\.ts:\d+:\d+$/);
  });

  it('still writes the line when a field cannot be serialised', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const out = await stdoutOf(() => logger.error('cyclic', { cyclic }), { stderr: true });
    expect(JSON.parse(out)).toMatchObject({
      level: 'ERROR',
      message: 'cyclic',
      log_error: 'fields not serializable',
    });
  });
});

describe('business metrics (EMF)', () => {
  const saved = process.env.STAGE;
  beforeEach(() => {
    metrics.clearMetrics();
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.STAGE;
    else process.env.STAGE = saved;
    metrics.clearMetrics();
  });

  it('records nothing on the local stack or without a stage, so stdout stays clean', async () => {
    for (const stage of [undefined, 'local']) {
      if (stage === undefined) delete process.env.STAGE;
      else process.env.STAGE = stage;
      countEvent(BusinessMetric.VisitsRecorded);
      expect(metrics.hasStoredMetrics(), String(stage)).toBe(false);
      expect(await stdoutOf(publishMetrics)).toBe('');
    }
  });

  it('writes one EMF document per invocation in a deployed stage', async () => {
    process.env.STAGE = 'dev';
    countEvent(BusinessMetric.LinksCreated);
    countEvent(BusinessMetric.LinksCreated);
    const out = await stdoutOf(publishMetrics);
    const emf = JSON.parse(out.trim()) as Record<string, unknown> & {
      _aws: {
        CloudWatchMetrics: Array<{ Namespace: string; Metrics: Array<{ Name: string; Unit: string }> }>;
      };
    };
    expect(emf._aws.CloudWatchMetrics[0]?.Namespace).toBe('ReferralApi');
    expect(emf._aws.CloudWatchMetrics[0]?.Metrics).toEqual([{ Name: 'LinksCreated', Unit: 'Count' }]);
    expect(emf.LinksCreated).toEqual([1, 1]);
    expect(emf.service).toBe('referral-api');
    // Nothing stored: a GET that records no event publishes nothing (and warns nothing).
    expect(await stdoutOf(publishMetrics)).toBe('');
  });

  it('counts a delivery invocation: succeeded, failed (retried) and dead-lettered', async () => {
    process.env.STAGE = 'prod';
    countDeliveries({ delivered: 2, dropped: 1, failed: 1, deadLettered: 1, moved: 4 });
    const out = await stdoutOf(publishMetrics);
    const emf = JSON.parse(out.trim()) as Record<string, unknown>;
    expect(emf.WebhookDeliveriesSucceeded).toBe(3);
    expect(emf.WebhookDeliveriesFailed).toBe(1);
    expect(emf.WebhookDeliveriesDeadLettered).toBe(1);
  });
});
