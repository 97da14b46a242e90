/**
 * API key secrets: `sk-sy-` followed by 43 base62 characters (256 bits of entropy), stored only as a
 * SHA-256 hash. A fast hash is right here: with 256 random bits there is nothing to brute-force, and
 * auth must stay cheap on the hot path.
 */
import { createHash } from 'node:crypto';
import { randomAlphanumeric } from '../core/ids.ts';

export const KEY_PREFIX = 'sk-sy-';

export function generateKeySecret(): string {
  return `${KEY_PREFIX}${randomAlphanumeric(43)}`;
}

const KEY_FORMAT = /^sk-sy-[A-Za-z0-9]{43}$/;

/** Whether a presented secret has the shape of a key this service makes (checked before any cache or database). */
export function hasKeyFormat(secret: string): boolean {
  return secret.length === KEY_PREFIX.length + 43 && KEY_FORMAT.test(secret);
}

export function hashKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** What listings show: the prefix, a few characters and the last four. */
export function redactKeySecret(secret: string): string {
  return `${secret.slice(0, KEY_PREFIX.length + 3)}…${secret.slice(-4)}`;
}
