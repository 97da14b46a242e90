/**
 * The blob store on the local disk, one file per blob under `<dataDir>/files/`. A put writes a
 * temporary name in the same directory, flushes it, then renames it into place: a rename within one
 * file system is atomic, so a reader never sees a half-written blob, even after a crash.
 */
import { createWriteStream } from 'node:fs';
import { constants } from 'node:fs';
import { access, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomHex } from '../../core/ids.ts';
import { assertBlobKey, holdSourceErrors, BlobTooLargeError, type BlobPutOptions, type BlobSource, type BlobStore } from '../blob-store.ts';

const TEMPORARY_SUFFIX = '.partial';

export class LocalDiskBlobStore implements BlobStore {
  private ready: Promise<unknown> | undefined;

  /** @param directory Where blobs live, e.g. `<dataDir>/files`; created on first use. */
  constructor(readonly directory: string) {}

  private ensureDirectory(): Promise<unknown> {
    this.ready ??= mkdir(this.directory, { recursive: true });
    return this.ready;
  }

  private pathOf(key: string): string {
    assertBlobKey(key);
    return join(this.directory, key);
  }

  async put(key: string, source: BlobSource, options: BlobPutOptions = {}): Promise<number> {
    holdSourceErrors(source);
    const target = this.pathOf(key);
    await this.ensureDirectory();
    // Dot-prefixed so listings and `get` never mistake it for a blob.
    const temporary = join(this.directory, `.${key}.${randomHex(12)}${TEMPORARY_SUFFIX}`);
    let written = 0;
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    const counter = new Transform({
      transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback) {
        const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        written += buffer.length;
        if (written > maxBytes) callback(new BlobTooLargeError(maxBytes));
        else callback(null, buffer);
      },
    });
    try {
      await pipeline(source, counter, createWriteStream(temporary, { flush: true }));
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return written;
  }

  async get(key: string): Promise<Readable | undefined> {
    try {
      const handle = await open(this.pathOf(key), 'r');
      return handle.createReadStream({ autoClose: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /** The directory exists (or can be made) and this process may write in it. */
  async check(): Promise<void> {
    await mkdir(this.directory, { recursive: true });
    await access(this.directory, constants.W_OK);
  }

  async close(): Promise<void> {
    // Nothing held open between calls.
  }

  /**
   * Removes temporary files older than `olderThanMs` milliseconds, left behind by a process that
   * died in the middle of a put. Returns how many were removed.
   */
  async removeAbandoned(olderThanMs: number, now = Date.now()): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    let removed = 0;
    for (const name of names) {
      if (!name.startsWith('.') || !name.endsWith(TEMPORARY_SUFFIX)) continue;
      const path = join(this.directory, name);
      try {
        if (now - (await stat(path)).mtimeMs < olderThanMs) continue;
        await rm(path, { force: true });
        removed++;
      } catch {
        // Renamed or removed by its writer meanwhile: nothing to clean.
      }
    }
    return removed;
  }
}
