import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/domain/errors.ts';
import { CampaignIdQuery, CreateCampaignBody, UpdateCampaignBody } from '../../lib/domain/schemas.ts';
import { compileValidator } from '../../lib/validation/generate.ts';

function detailsOf(validate: (v: unknown) => unknown, value: unknown) {
  try {
    validate(value);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.code).toBe('validation_failed');
    expect(e.status).toBe(400);
    expect(e.toBody().error.details).toEqual(e.details);
    return e.details ?? [];
  }
  throw new Error(`expected ${JSON.stringify(value)} to be rejected`);
}

const create = compileValidator(CreateCampaignBody);
const update = compileValidator(UpdateCampaignBody);
const idQuery = compileValidator(CampaignIdQuery);
const UUID = '3f0c8a2e-1b2c-4d3e-8f4a-5b6c7d8e9f01';

describe('compileValidator', () => {
  it('returns the value itself when it is valid', () => {
    const body = { url: 'example.com', name: 'x' };
    expect(create(body)).toBe(body);
    expect(update({})).toEqual({});
    expect(idQuery({ id: UUID })).toEqual({ id: UUID });
    expect(idQuery({ id: UUID.toUpperCase() })).toEqual({ id: UUID.toUpperCase() });
  });

  it('names every missing required field', () => {
    expect(detailsOf(create, {})).toEqual([
      { field: 'url', message: 'is required' },
      { field: 'name', message: 'is required' },
    ]);
    expect(detailsOf(idQuery, {})).toEqual([{ field: 'id', message: 'is required' }]);
  });

  it('names wrong types', () => {
    expect(detailsOf(create, { url: 1, name: null })).toEqual([
      { field: 'url', message: 'must be a string' },
      { field: 'name', message: 'must be a string' },
    ]);
    expect(detailsOf(update, { name: ['a'] })).toEqual([{ field: 'name', message: 'must be a string' }]);
    expect(detailsOf(update, { name: { a: 1 } })).toEqual([{ field: 'name', message: 'must be a string' }]);
    expect(detailsOf(update, { name: true })).toEqual([{ field: 'name', message: 'must be a string' }]);
  });

  it('rejects unknown fields, one detail each', () => {
    expect(detailsOf(create, { url: 'x', name: 'y', nmae: 'typo', extra: 1 })).toEqual([
      { field: 'nmae', message: 'is not a known field' },
      { field: 'extra', message: 'is not a known field' },
    ]);
    expect(detailsOf(update, { webhookUrl: 'https://x.example' })).toEqual([
      { field: 'webhookUrl', message: 'is not a known field' },
    ]);
  });

  it('rejects __proto__ and constructor as unknown fields', () => {
    const body = JSON.parse('{"url":"x","name":"y","__proto__":{"polluted":true},"constructor":1}');
    expect(detailsOf(create, body).map((d) => d.field)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reports the length bound', () => {
    expect(detailsOf(create, { url: 'x'.repeat(2049), name: 'y' })).toEqual([
      { field: 'url', message: 'must be at most 2048 characters' },
    ]);
  });

  it('names a malformed UUID', () => {
    for (const id of [
      'nope',
      `${UUID}x`,
      UUID.replace(/-/g, ''),
      ` ${UUID}`,
      `${UUID},${UUID}`,
      '%E0%A4%A',
    ]) {
      const details = detailsOf(idQuery, { id });
      expect(details).toHaveLength(1);
      expect(details[0]?.field).toBe('id');
      expect(details[0]?.message).toBe('must be a UUID');
    }
  });

  it('describes a string-or-null field as such', () => {
    for (const webhook_url of [5, true, {}, ['https://x.example']]) {
      expect(detailsOf(update, { webhook_url })).toEqual([
        { field: 'webhook_url', message: 'must be a string or null' },
      ]);
    }
  });

  it('names the body itself when it is not an object', () => {
    for (const value of [null, [], 'str', 42, true]) {
      expect(detailsOf(create, value)).toEqual([{ field: '(body)', message: 'must be an object' }]);
    }
  });

  it('uses dotted paths for nested fields and array items, with correct articles', () => {
    const schema = Type.Object({
      a: Type.Object({ 'b/c': Type.Integer() }),
      n: Type.Number(),
      list: Type.Array(Type.String()),
    });
    expect(detailsOf(compileValidator(schema), { a: { 'b/c': 1.5 }, n: 'x', list: [1] })).toEqual([
      { field: 'a.b/c', message: 'must be an integer' },
      { field: 'n', message: 'must be a number' },
      { field: 'list.0', message: 'must be a string' },
    ]);
  });

  it('does not call an out-of-range integer a non-integer', () => {
    const validate = compileValidator(Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000 }) }));
    for (const limit of [0, 1001]) {
      const [detail] = detailsOf(validate, { limit });
      expect(detail?.field).toBe('limit');
      expect(detail?.message).not.toMatch(/must be an? integer/);
    }
    expect(detailsOf(validate, { limit: 1.5 })).toEqual([{ field: 'limit', message: 'must be an integer' }]);
  });

  it('caps the number of details at 20', () => {
    const body: Record<string, unknown> = { url: 'x', name: 'y' };
    for (let i = 0; i < 50; i++) body[`f${i}`] = i;
    expect(detailsOf(create, body)).toHaveLength(20);
  });
});
