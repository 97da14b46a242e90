/**
 * Dashboard passwords: scrypt (memory-hard, node:crypto), stored as `scrypt$N$r$p$salt$hash` so the
 * cost can be raised later without breaking stored hashes. Verification is constant-time.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** N = 2^15, r = 8: 32 MiB and roughly 50 ms per hash on one core. */
const DEFAULT_COST = { N: 32_768, r: 8, p: 1 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFKC'),
      salt,
      KEY_LENGTH,
      { ...options, maxmem: 128 * (options.N ?? 0) * (options.r ?? 0) * 2 },
      (error, key) => (error === null ? resolve(key) : reject(error)),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, DEFAULT_COST);
  return `scrypt$${DEFAULT_COST.N}$${DEFAULT_COST.r}$${DEFAULT_COST.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, cost, blockSize, parallelism, salt, expected] = parts as [string, string, string, string, string, string];
  const expectedKey = Buffer.from(expected, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(cost), r: Number(blockSize), p: Number(parallelism) });
  return key.length === expectedKey.length && timingSafeEqual(key, expectedKey);
}

let cachedDecoyHash: Promise<string> | undefined;

/** A hash of a random password, verified against when the account is unknown so timing reveals nothing. */
export function decoyHash(): Promise<string> {
  cachedDecoyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return cachedDecoyHash;
}

/** Long enough to resist guessing, short enough that hashing stays cheap. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < 10) return 'The password must have at least 10 characters.';
  if (password.length > 200) return 'The password must have at most 200 characters.';
  return undefined;
}
