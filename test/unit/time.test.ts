import { describe, expect, it } from 'vitest';
import { formatTimestamp, parseTimestamp } from '../../lib/domain/time.ts';

describe('formatTimestamp', () => {
  it('formats UTC as YYYY-MM-DD_HH-MM-SS (the contract example)', () => {
    expect(formatTimestamp(new Date(Date.UTC(2026, 10, 22, 14, 5, 9, 999)))).toBe('2026-11-22_14-05-09');
  });

  it('zero-pads every part and drops milliseconds', () => {
    expect(formatTimestamp(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02_03-04-05');
    expect(formatTimestamp(new Date(Date.UTC(2000, 11, 31, 23, 59, 59, 999)))).toBe('2000-12-31_23-59-59');
  });

  it('is UTC whatever the Date was built from', () => {
    expect(formatTimestamp(new Date('2026-11-22T16:05:09+02:00'))).toBe('2026-11-22_14-05-09');
  });

  it('matches the contract pattern for now', () => {
    expect(formatTimestamp(new Date())).toMatch(/^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}$/);
  });
});

describe('parseTimestamp', () => {
  it('round-trips formatTimestamp', () => {
    const date = new Date(Date.UTC(2026, 10, 22, 14, 5, 9));
    expect(parseTimestamp(formatTimestamp(date))?.toISOString()).toBe(date.toISOString());
  });

  it.each([
    '',
    '2026-11-22 14:05:09',
    '2026-11-22T14-05-09',
    '2026-11-22_14-05-09Z',
    ' 2026-11-22_14-05-09',
    '2026-11-22_14-05',
    '26-11-22_14-05-09',
    '2026-1-22_14-05-09',
  ])('rejects the malformed %j', (value) => {
    expect(parseTimestamp(value)).toBeUndefined();
  });

  it.each([
    '2026-02-30_00-00-00',
    '2026-04-31_00-00-00',
    '2026-13-01_00-00-00',
    '2026-00-10_00-00-00',
    '2026-01-00_00-00-00',
    '2026-01-01_24-00-00',
    '2026-01-01_23-60-00',
    '2026-01-01_23-59-60',
  ])('rejects the impossible date %j instead of rolling it over', (value) => {
    expect(parseTimestamp(value)).toBeUndefined();
  });

  it('accepts 29 February in a leap year only', () => {
    expect(parseTimestamp('2028-02-29_12-00-00')?.toISOString()).toBe('2028-02-29T12:00:00.000Z');
    expect(parseTimestamp('2026-02-29_12-00-00')).toBeUndefined();
  });
});
