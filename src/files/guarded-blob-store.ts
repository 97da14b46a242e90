/**
 * A blob store behind the object store's circuit breaker: while the store is known down, file
 * uploads and downloads are refused at once with 500 `service_unavailable` and `retry-after` (not
 * `internal_error`, and not after each request has waited out its own timeout); every call's outcome
 * feeds the breaker, whose probe (`check`) notices the heal.
 */
import type { Readable } from 'node:stream';
import type { CircuitBreaker } from '../core/circuit-breaker.ts';
import { holdSourceErrors, type BlobPutOptions, type BlobSource, type BlobStore } from './blob-store.ts';

export class GuardedBlobStore implements BlobStore {
  constructor(
    private readonly store: BlobStore,
    private readonly breaker: CircuitBreaker,
  ) {}

  put(key: string, source: BlobSource, options?: BlobPutOptions): Promise<number> {
    // An open breaker refuses without reading the source: its later error must not be an uncaught one.
    holdSourceErrors(source);
    return this.breaker.run(() => this.store.put(key, source, options));
  }

  get(key: string): Promise<Readable | undefined> {
    return this.breaker.run(() => this.store.get(key));
  }

  delete(key: string): Promise<void> {
    return this.breaker.run(() => this.store.delete(key));
  }

  check(): Promise<void> {
    return this.store.check();
  }

  removeAbandoned(olderThanMs: number): Promise<number> {
    return this.breaker.run(() => this.store.removeAbandoned(olderThanMs));
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
