/**
 * The blob store port: where file bytes live, addressed by a key (the file id). Typed by what the
 * files and batches code uses and no more, so that an object-storage backend is one new folder.
 */
import type { Readable } from 'node:stream';

/** Bytes accepted by `put`: a Node stream or any (async) iterable of chunks. */
export type BlobSource = Readable | AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

export interface BlobPutOptions {
  /** Refuse (and keep nothing) when the content is larger than this many bytes. */
  maxBytes?: number;
}

export interface BlobStore {
  /**
   * Stores the whole source under `key`, atomically: until it resolves nothing is visible under the
   * key, and when it rejects nothing is kept. Replaces an existing blob. Resolves to bytes written.
   */
  put(key: string, source: BlobSource, options?: BlobPutOptions): Promise<number>;
  /** The stored bytes as a stream, or undefined when there is no such blob. */
  get(key: string): Promise<Readable | undefined>;
  /** Removes the blob; no error when it is already gone. */
  delete(key: string): Promise<void>;
}

/** Thrown by `put` when the source exceeds `maxBytes`. */
export class BlobTooLargeError extends Error {
  /** The limit that was exceeded, bytes. */
  readonly maxBytes: number;

  constructor(maxBytes: number) {
    super(`The content is larger than ${maxBytes} bytes.`);
    this.name = 'BlobTooLargeError';
    this.maxBytes = maxBytes;
  }
}

/** Keys are file ids: letters, digits, `-` and `_` only, so they are safe as file names anywhere. */
export function assertBlobKey(key: string): void {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(key)) throw new Error(`Invalid blob key: ${JSON.stringify(key)}`);
}
