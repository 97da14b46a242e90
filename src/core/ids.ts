/**
 * Identifier generators. Prefixes follow the wire formats the SDKs expect (docs/wire-contracts.md) and the
 * SPEC (`resp_` + 48 hex, `auth-` + 16 hex, `batch-`, `file-`, `modr-`).
 */
import { randomBytes } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Random bytes from the CSPRNG, drawn in 8 KiB batches: several ids are made per request, and one
 * `randomBytes` call per id showed up at 4% of the gateway's CPU profile. Each byte is used once.
 */
const POOL_BYTES = 8192;
let pool = randomBytes(POOL_BYTES);
let poolOffset = 0;

function takeRandomBytes(count: number): Buffer {
  if (count > POOL_BYTES) return randomBytes(count);
  if (poolOffset + count > POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + count);
  poolOffset += count;
  return bytes;
}

const ALPHANUMERIC_CODES = Buffer.from(ALPHANUMERIC, 'latin1');

/**
 * `length` random characters from [A-Za-z0-9]. Written into a buffer and read out as one string: a
 * string grown a character at a time is a chain of ~30 pieces for an id (one made per answer).
 */
export function randomAlphanumeric(length: number): string {
  const bytes = takeRandomBytes(length * 2);
  const characters = Buffer.allocUnsafe(length);
  let written = 0;
  for (let index = 0; written < length && index < bytes.length; index++) {
    const byte = bytes[index]!;
    // 248 = 4 * 62: discard the tail to keep the distribution uniform.
    if (byte < 248) characters[written++] = ALPHANUMERIC_CODES[byte % 62]!;
  }
  const result = characters.toString('latin1', 0, written);
  return written === length ? result : result + randomAlphanumeric(length - written);
}

export function randomHex(characters: number): string {
  return takeRandomBytes(Math.ceil(characters / 2))
    .toString('hex')
    .slice(0, characters);
}

/**
 * Request ids are made for every request, so they avoid the CSPRNG: a random per-process prefix (unique
 * across instances) plus a counter. They identify, they do not authorise, so predictability is fine.
 */
const requestIdPrefix = randomAlphanumeric(12);
let requestCounter = 0;

export const newId = {
  chatCompletion: (): string => `chatcmpl-${randomAlphanumeric(29)}`,
  toolCall: (): string => `call_${randomAlphanumeric(24)}`,
  message: (): string => `msg_${randomAlphanumeric(24)}`,
  toolUse: (): string => `toolu_${randomAlphanumeric(24)}`,
  response: (): string => `resp_${randomHex(48)}`,
  responseMessageItem: (): string => `msg_${randomHex(48)}`,
  responseFunctionCallItem: (): string => `fc_${randomHex(48)}`,
  responseReasoningItem: (): string => `rs_${randomHex(48)}`,
  authorizationCheck: (): string => `auth-${randomHex(16)}`,
  moderation: (): string => `modr-${randomAlphanumeric(24)}`,
  file: (): string => `file-${randomAlphanumeric(24)}`,
  batch: (): string => `batch-${randomAlphanumeric(24)}`,
  batchRequest: (): string => `batch_req_${randomAlphanumeric(24)}`,
  request: (): string => `req_${requestIdPrefix}${(requestCounter++).toString(36).padStart(12, '0')}`,
};
