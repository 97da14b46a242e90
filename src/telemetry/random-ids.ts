/**
 * Random trace and span ids, cheap: a pool of random bytes (node:crypto, refilled 8 KiB at a time) is
 * turned into hex once, and each id is a slice of that hex string (a slice of a long string is not
 * copied). The SDK's RandomIdGenerator draws Math.random per 4 bytes and formats hex per id; this
 * draws from the operating system's generator and formats once per 1,024 span ids. An id that would
 * be all zeros (invalid in W3C trace context) is never handed out.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 8 * 1024;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

export class PooledRandomIds {
  private readonly bytes = Buffer.allocUnsafe(POOL_BYTES);
  private hex = '';
  /** The next unused character of `hex`. */
  private at = 0;

  private take(chars: number): string {
    if (this.at + chars > this.hex.length) {
      this.hex = randomFillSync(this.bytes).toString('hex');
      this.at = 0;
    }
    const id = this.hex.slice(this.at, this.at + chars);
    this.at += chars;
    return id;
  }

  generateTraceId(): string {
    let id = this.take(32);
    while (id === ZERO_TRACE_ID) id = this.take(32);
    return id;
  }

  generateSpanId(): string {
    let id = this.take(16);
    while (id === ZERO_SPAN_ID) id = this.take(16);
    return id;
  }
}
