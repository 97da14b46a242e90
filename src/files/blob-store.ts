/**
 * The blob store port: where file bytes live, addressed by a key (the file id). Typed by what the
 * files and batches code uses and no more. Backends, one folder each: `local-disk/`, `postgres/`, `s3/`;
 * `create-blob-store.ts` picks one from the config.
 */
import { Readable } from 'node:stream';

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
  /** Resolves when the store can be reached, rejects with the reason otherwise (readiness probe). */
  check(): Promise<void>;
  /**
   * Removes what puts that died half-way (process killed) left behind and untouched for `olderThanMs`
   * milliseconds. Returns how many such leftovers were removed.
   */
  removeAbandoned(olderThanMs: number): Promise<number>;
  /** Releases connections; the store is not used afterwards. */
  close(): Promise<void>;
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

/**
 * Counts the bytes of a source while handing them on as Buffers, and throws BlobTooLargeError as soon
 * as the count passes `maxBytes`: the one size check every backend shares.
 */
/**
 * A stream source that fails before the store reads from it (the client gone while the put still awaits
 * its directory or its first query) emits an 'error' nobody listens to yet: an uncaught exception that
 * ends the process. Every store calls this first, synchronously: the error is then kept by the stream
 * (`errored`), and the read that follows fails the put with it, which discards the upload.
 */
export function holdSourceErrors(source: BlobSource): void {
  if (source instanceof Readable) source.on('error', ignoreUntilRead);
}

function ignoreUntilRead(): void {}

export async function* countedChunks(source: BlobSource, maxBytes: number, onBytes: (total: number) => void): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of source) {
    const buffer =
      typeof chunk === 'string'
        ? Buffer.from(chunk)
        : Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    total += buffer.length;
    if (total > maxBytes) throw new BlobTooLargeError(maxBytes);
    onBytes(total);
    yield buffer;
  }
}
