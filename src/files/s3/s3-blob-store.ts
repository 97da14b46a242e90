/**
 * The blob store in any S3-compatible object store (FILES_STORE=s3://bucket[/prefix]): AWS S3, MinIO,
 * Ceph, R2... A put streams the source through a multipart upload (`@aws-sdk/lib-storage`), a few parts
 * in memory at a time; S3 makes the object visible only when the upload completes, and a failed put
 * aborts the upload, so nothing half-written is ever visible. A put killed with its process leaves an
 * incomplete multipart upload, which a bucket lifecycle rule (AbortIncompleteMultipartUpload) removes.
 */
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { assertBlobKey, holdSourceErrors, countedChunks, type BlobPutOptions, type BlobSource, type BlobStore } from '../blob-store.ts';

export interface S3BlobStoreOptions {
  bucket: string;
  /** Key prefix without surrounding slashes; '' for the bucket root. */
  prefix: string;
  /** An S3-compatible server's URL; path-style addressing is used with it (MinIO and most others need it). */
  endpoint: string | undefined;
  region: string;
  /** Undefined: the SDK's default chain (environment, profile, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  /** Bytes per multipart part (S3's minimum is 5 MiB). */
  partBytes?: number;
  /**
   * Longest wait for a connection, and `requestTimeoutMs`: the total deadline of each S3 request up to
   * its answer, however slowly the store trickles bytes, and the longest silence while a download's
   * body streams, ms (default 2,000 and 15,000).
   */
  timeouts?: { connectTimeoutMs: number; requestTimeoutMs: number };
  /**
   * Parts uploaded at once. A put holds about partBytes x (partsInFlight + 2): the parts in flight, the
   * one being gathered and its joined copy (lib-storage concatenates each part).
   */
  partsInFlight?: number;
}

/**
 * S3's minimum part (and lib-storage's default). Against s3rver (bench/blob-store.ts) 8 MiB parts were
 * no faster and cost a put about 10 MB more RSS at its peak; a real S3 was not measured.
 */
export const DEFAULT_PART_BYTES = 5 * 1024 * 1024;

function isMissing(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404);
}

/** The check's own client: one connection, enough for a HEAD now and then. */
const CHECK_MAX_SOCKETS = 1;

export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  /**
   * The readiness check and the breaker's probe use a client (and connection pool) of their own, so a
   * slow store's uploads cannot starve the check, nor the check's short bound cut an upload short.
   */
  private readonly checkClient: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partBytes: number;
  private readonly partsInFlight: number;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix === '' ? '' : `${options.prefix}/`;
    this.partBytes = options.partBytes ?? DEFAULT_PART_BYTES;
    this.partsInFlight = options.partsInFlight ?? 4;
    const timeouts = options.timeouts ?? { connectTimeoutMs: 2_000, requestTimeoutMs: 15_000 };
    const common = {
      region: options.region,
      // One attempt, so a request waits at most its bound (the chaos suite saw two attempts double it);
      // the breaker refuses the rest while the store is down and its probe notices the heal.
      maxAttempts: 1,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint, forcePathStyle: true }),
      // A copy: the SDK marks the credentials object it is given, and the config's is frozen.
      ...(options.credentials === undefined ? {} : { credentials: { ...options.credentials } }),
    };
    // Every wait bounded: the connect; each request up to its answer by a total deadline
    // (`requestTimeout` with `throwOnRequestTimeout`: without it the SDK only warns, and a store that
    // trickles a byte now and then held an upload 26 s against a 15 s bound); and any silence while a
    // download's body streams (`socketTimeout`). A put's parts are gathered in memory before each part
    // request starts, so a slow client never counts against the store's deadline.
    const requestHandler = {
      connectionTimeout: timeouts.connectTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      throwOnRequestTimeout: true,
      socketTimeout: timeouts.requestTimeoutMs,
    };
    this.client = new S3Client({ ...common, requestHandler });
    this.checkClient = new S3Client({
      ...common,
      requestHandler: { ...requestHandler, httpAgent: { keepAlive: true, maxSockets: CHECK_MAX_SOCKETS } },
    });
  }

  private objectKey(key: string): string {
    assertBlobKey(key);
    return `${this.prefix}${key}`;
  }

  async put(key: string, source: BlobSource, options: BlobPutOptions = {}): Promise<number> {
    holdSourceErrors(source);
    const objectKey = this.objectKey(key);
    let total = 0;
    const body = Readable.from(
      countedChunks(source, options.maxBytes ?? Number.POSITIVE_INFINITY, (bytes) => (total = bytes)),
      { objectMode: false },
    );
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: objectKey, Body: body },
      partSize: this.partBytes,
      queueSize: this.partsInFlight,
      // A failed put aborts its multipart upload: no parts are left to pay for.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      body.destroy();
      // The Upload reports its own abort; the size limit (or a broken source) is the real cause.
      if (body.errored !== null && body.errored !== undefined) throw body.errored;
      throw error;
    }
    return total;
  }

  async get(key: string): Promise<Readable | undefined> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      const body = answer.Body;
      if (body === undefined) return Readable.from([]);
      // In Node the SDK's body is an http.IncomingMessage (a Readable) with helper methods mixed in.
      return body instanceof Readable ? body : Readable.fromWeb(body.transformToWebStream() as Parameters<typeof Readable.fromWeb>[0]);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 for a key that does not exist: deleting is idempotent by itself.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  async check(): Promise<void> {
    await this.checkClient.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async removeAbandoned(): Promise<number> {
    // Incomplete multipart uploads are the bucket's to expire (lifecycle rule AbortIncompleteMultipartUpload).
    return 0;
  }

  async close(): Promise<void> {
    this.client.destroy();
    this.checkClient.destroy();
  }
}
