/**
 * In-process calls made on a key's behalf: batch lines run through the same routes (validation,
 * limits, metering, encoders) with Fastify's `inject`, carrying a per-process secret and the key id
 * instead of the key itself (only its hash is stored). The secret never leaves the process, so the
 * headers cannot be forged from outside; over the network they are simply not recognised.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { randomHex } from '../core/ids.ts';

const SECRET_HEADER = 'x-switchyard-internal';
const KEY_HEADER = 'x-switchyard-key-id';
const BATCH_HEADER = 'x-switchyard-batch';

export interface InternalCaller {
  keyId: string;
  /** Batch lines are priced at 50%. */
  batch: boolean;
}

export class InternalCalls {
  private readonly secret = Buffer.from(randomHex(64));

  /** Headers for an injected request on `keyId`'s behalf. */
  headersFor(caller: InternalCaller): Record<string, string> {
    return { [SECRET_HEADER]: this.secret.toString(), [KEY_HEADER]: caller.keyId, ...(caller.batch ? { [BATCH_HEADER]: '1' } : {}) };
  }

  /** The caller when the headers carry this process's secret; undefined otherwise. */
  verify(headers: IncomingHttpHeaders): InternalCaller | undefined {
    const presented = headers[SECRET_HEADER];
    const keyId = headers[KEY_HEADER];
    if (typeof presented !== 'string' || typeof keyId !== 'string') return undefined;
    const candidate = Buffer.from(presented);
    if (candidate.length !== this.secret.length || !timingSafeEqual(candidate, this.secret)) return undefined;
    return { keyId, batch: headers[BATCH_HEADER] === '1' };
  }
}
