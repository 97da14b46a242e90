/** The blob store the config names (`filesStore`): local disk, Postgres or an S3-compatible store. */
import type { FilesStoreConfig } from '../config/index.ts';
import type { BlobStore } from './blob-store.ts';
import type { CircuitBreaker } from '../core/circuit-breaker.ts';
import { GuardedBlobStore } from './guarded-blob-store.ts';
import type { PostgresBlobTimeouts } from './postgres/postgres-blob-store.ts';
import { LocalDiskBlobStore } from './local-disk/local-disk-blob-store.ts';

export interface CreateBlobStoreOptions {
  /** The object store's breaker (remote stores only: a local disk is not a dependency that goes away). */
  breaker?: CircuitBreaker;
  /** Bounds of the Postgres store's own pool. */
  postgresTimeouts?: PostgresBlobTimeouts;
  /** Bounds of S3 requests, ms. */
  s3Timeouts?: { connectTimeoutMs: number; requestTimeoutMs: number };
}

/**
 * The store the config names. The S3 and Postgres backends are imported only when configured: the AWS
 * SDK costs about 12 MB of memory and start-up time that a local or Postgres store should not pay, and
 * pg ~3 MB of heap that an instance on SQLite and local disk would otherwise carry.
 */
export async function createBlobStore(config: FilesStoreConfig, options: CreateBlobStoreOptions = {}): Promise<BlobStore> {
  const guard = (store: BlobStore): BlobStore => (options.breaker === undefined ? store : new GuardedBlobStore(store, options.breaker));
  switch (config.kind) {
    case 'local':
      return new LocalDiskBlobStore(config.directory);
    case 'postgres': {
      const { PostgresBlobStore } = await import('./postgres/postgres-blob-store.ts');
      return guard(
        new PostgresBlobStore({
          connectionString: config.databaseUrl,
          ...(options.postgresTimeouts === undefined ? {} : { timeouts: options.postgresTimeouts }),
        }),
      );
    }
    case 's3': {
      const { S3BlobStore } = await import('./s3/s3-blob-store.ts');
      return guard(new S3BlobStore({ ...config, ...(options.s3Timeouts === undefined ? {} : { timeouts: options.s3Timeouts }) }));
    }
    default:
      throw new Error(`Unknown files store ${JSON.stringify(config satisfies never)}`);
  }
}

/** A short description for logs and `/readyz`: `local`, `postgres` or `s3://bucket/prefix`. */
export function describeFilesStore(config: FilesStoreConfig): string {
  if (config.kind === 's3') return `s3://${config.bucket}${config.prefix === '' ? '' : `/${config.prefix}`}`;
  return config.kind;
}
