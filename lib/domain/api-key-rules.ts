/**
 * API keys: 256 random bits, shown once, stored only as a SHA-256 hash. SHA-256 (not a slow
 * password hash) is right here because the key is high-entropy random data, not a password, and
 * the authorizer must check it on the hot path. The keys' items are `lib/db/api-keys.ts`.
 */
import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'rk_';
export const TENANT_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
