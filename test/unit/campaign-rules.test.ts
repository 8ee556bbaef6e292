import { describe, expect, it } from 'vitest';
import {
  campaignCreateInput,
  campaignUpdateInput,
  checkWebhookUrl,
} from '../../lib/domain/campaign-rules.ts';
import { ApiError } from '../../lib/domain/errors.ts';
import { MAX_NAME_LENGTH } from '../../lib/domain/schemas.ts';

/** Run `fn` and return the ApiError it throws (fails the test when it does not throw one). */
function apiErrorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected an ApiError');
}

const local = { allowPrivate: true };
const deployed = { allowPrivate: false };

describe('campaignCreateInput', () => {
  it('trims the name and prefixes a scheme-less url with https://', () => {
    expect(campaignCreateInput({ url: ' example.com/x ', name: '  Spring sale \n' })).toEqual({
      url: 'https://example.com/x',
      name: 'Spring sale',
      currency: 'USD',
    });
    expect(campaignCreateInput({ url: 'example.com', name: 'Yen', currency: 'JPY' }).currency).toBe('JPY');
  });

  it('accepts names of 1 and 256 characters after trimming', () => {
    expect(campaignCreateInput({ url: 'example.com', name: ' a ' }).name).toBe('a');
    const long = 'n'.repeat(MAX_NAME_LENGTH);
    expect(campaignCreateInput({ url: 'example.com', name: `  ${long}  ` }).name).toBe(long);
  });

  it('rejects a non-http url with a detail naming the url field', () => {
    const err = apiErrorOf(() => campaignCreateInput({ url: 'javascript:alert(1)', name: 'x' }));
    expect(err.code).toBe('validation_failed');
    expect(err.details).toEqual([{ field: 'url', message: expect.any(String) }]);
  });
});

describe('campaignUpdateInput', () => {
  it('an empty body changes nothing', () => {
    expect(campaignUpdateInput({}, local)).toEqual({});
  });

  // A `url` in the body is refused before the body is validated (the handler's `refusedFields`):
  // campaigns.test.ts and odd-input.test.ts check url_immutable through the API.

  it('trims the name (lengths and characters: the schema, in schema-kinds.test.ts)', () => {
    expect(campaignUpdateInput({ name: '  Renamed ' }, local)).toEqual({ name: 'Renamed' });
  });

  it('webhook_url null clears it (and is kept distinct from absent)', () => {
    expect(campaignUpdateInput({ webhook_url: null }, local)).toEqual({ webhook_url: null });
    expect(campaignUpdateInput({ webhook_url: null }, deployed)).toEqual({ webhook_url: null });
    expect('webhook_url' in campaignUpdateInput({ name: 'x' }, local)).toBe(false);
  });

  it('webhook_url is trimmed', () => {
    expect(campaignUpdateInput({ webhook_url: ' https://hooks.example.com/in ' }, deployed)).toEqual({
      webhook_url: 'https://hooks.example.com/in',
    });
  });

  it('http webhook URLs are refused when allowPrivate is false, allowed locally', () => {
    const err = apiErrorOf(() => campaignUpdateInput({ webhook_url: 'http://hooks.example.com' }, deployed));
    expect(err.code).toBe('validation_failed');
    expect(err.details).toEqual([{ field: 'webhook_url', message: 'must be an https URL' }]);
    expect(campaignUpdateInput({ webhook_url: 'http://127.0.0.1:9000/h' }, local)).toEqual({
      webhook_url: 'http://127.0.0.1:9000/h',
    });
  });

  it.each(['hooks.example.com', '/relative', 'ftp://hooks.example.com', 'javascript:alert(1)'])(
    'rejects the webhook_url %j in every mode',
    (webhook_url) => {
      for (const policy of [local, deployed]) {
        const err = apiErrorOf(() => campaignUpdateInput({ webhook_url }, policy));
        expect(err.details?.[0]?.field).toBe('webhook_url');
      }
    },
  );
});

describe('checkWebhookUrl', () => {
  it('accepts an https URL of 2048 characters (the length bound is in the schema)', () => {
    const url = `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}`;
    expect(checkWebhookUrl(url, deployed)).toEqual({ ok: true, url });
  });

  it('treats the scheme case-insensitively', () => {
    expect(checkWebhookUrl('HTTPS://hooks.example.com', deployed).ok).toBe(true);
    expect(checkWebhookUrl('HTTP://hooks.example.com', deployed).ok).toBe(false);
  });
});
