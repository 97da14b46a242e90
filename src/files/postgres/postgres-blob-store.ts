/**
 * The blob store in Postgres (FILES_STORE=postgres): every instance shares the files through the
 * database it already needs. A blob is a row in `blob_objects` pointing at numbered chunk rows in
 * `blob_chunks`, written and read a few chunks at a time, so a 100 MB file never sits in memory.
 *
 * A put writes its chunks under a fresh upload id (registered in `blob_uploads`), then commits in one
 * transaction that points the key at them and drops the chunks of the blob it replaces: until then
 * readers see the old blob or none; on failure the chunks are removed; after a crash the sweep
 * (`removeAbandoned`) removes them. Chunks are written in autocommit statements rather than one long
 * transaction, so a slow client upload never holds a connection idle in a transaction. Reads are
 * `COPY ... TO STDOUT (FORMAT binary)` statements (pg-copy-streams; rows split by binary-copy-rows.ts),
 * a few chunks each, one ahead of the reader: raw bytes rather than the hex text a SELECT returns
 * through pg (see `copyChunks`).
 *
 * It keeps its own small connection pool (raw `pg`) so that large transfers never starve the service's
 * own queries.
 */
import { Readable } from 'node:stream';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { randomHex } from '../../core/ids.ts';
import { assertBlobKey, holdSourceErrors, countedChunks, type BlobPutOptions, type BlobSource, type BlobStore } from '../blob-store.ts';
import { BinaryCopyRows } from './binary-copy-rows.ts';

export interface PostgresBlobStoreOptions {
  /** `postgres://...`: the service's database (migrations create the tables). */
  connectionString: string;
  /** Bytes per chunk row (see bench/blob-store.ts for the measurements behind the default). */
  chunkBytes?: number;
  /** Chunk rows fetched by one query when reading. */
  chunksPerRead?: number;
  /** Chunk inserts one put keeps in flight, overlapping the network with reading the source. */
  writesInFlight?: number;
  /** Connections of the store's own pool. */
  poolSize?: number;
  /** Bounds on every wait for the database (config `dependencies`); defaults below. */
  timeouts?: PostgresBlobTimeouts;
}

/** Bounds on the store's waits for Postgres, ms (the same figures as the service's own pool). */
export interface PostgresBlobTimeouts {
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

export const DEFAULT_CHUNK_BYTES = 1024 * 1024;
/** How often a long put refreshes `blob_uploads.touched_at`, so the sweep never takes it for dead. */
const TOUCH_INTERVAL_MS = 10_000;

const INSERT_CHUNK = 'INSERT INTO blob_chunks (upload_id, seq, data) VALUES ($1, $2, $3)';
export class PostgresBlobStore implements BlobStore {
  private readonly pool: pg.Pool;
  private readonly chunkBytes: number;
  private readonly chunksPerRead: number;
  private readonly writesInFlight: number;

  constructor(options: PostgresBlobStoreOptions) {
    this.chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    this.chunksPerRead = options.chunksPerRead ?? 4;
    this.writesInFlight = options.writesInFlight ?? 2;
    const timeouts = options.timeouts ?? { connectTimeoutMs: 2_000, statementTimeoutMs: 15_000, idleInTransactionTimeoutMs: 30_000 };
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 4,
      connectionTimeoutMillis: timeouts.connectTimeoutMs,
      statement_timeout: timeouts.statementTimeoutMs,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
      // A frozen server never answers, so the server-side timeout never fires: the client's does.
      query_timeout: timeouts.statementTimeoutMs + 1_000,
      keepAlive: true,
      // Chunk inserts do not wait for their own WAL flush (an fsync per chunk). Nothing is lost by it:
      // the committing transaction is synchronous, and flushing its WAL record flushes every earlier
      // one, so all chunks are durable before a put resolves.
      options: '-c synchronous_commit=off',
    });
    // An idle connection dropped by the server must not crash the process: the next query reconnects.
    this.pool.on('error', () => undefined);
    // The same for a client checked out when the server ends its connection (its own query fails).
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  async put(key: string, source: BlobSource, options: BlobPutOptions = {}): Promise<number> {
    holdSourceErrors(source);
    assertBlobKey(key);
    const uploadId = randomHex(16);
    await this.pool.query('INSERT INTO blob_uploads (upload_id, touched_at) VALUES ($1, $2)', [uploadId, Date.now()]);
    const inFlight = new Set<Promise<void>>();
    let writeFailure: { error: unknown } | undefined;
    let lastTouch = Date.now();
    let sequence = 0;
    let total = 0;
    const write = async (chunk: Buffer): Promise<void> => {
      while (inFlight.size >= this.writesInFlight) await Promise.race(inFlight);
      if (writeFailure !== undefined) throw writeFailure.error;
      if (Date.now() - lastTouch > TOUCH_INTERVAL_MS) {
        lastTouch = Date.now();
        await this.pool.query('UPDATE blob_uploads SET touched_at = $2 WHERE upload_id = $1', [uploadId, lastTouch]);
      }
      const insert: Promise<void> = this.pool.query(INSERT_CHUNK, [uploadId, sequence++, chunk]).then(
        () => void inFlight.delete(insert),
        (error: unknown) => {
          writeFailure ??= { error };
          inFlight.delete(insert);
        },
      );
      inFlight.add(insert);
    };
    try {
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for await (const buffer of countedChunks(source, options.maxBytes ?? Number.POSITIVE_INFINITY, (bytes) => (total = bytes))) {
        pending.push(buffer);
        pendingBytes += buffer.length;
        while (pendingBytes >= this.chunkBytes) {
          const joined = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
          const rest = joined.subarray(this.chunkBytes);
          await write(joined.subarray(0, this.chunkBytes));
          pending = rest.length > 0 ? [rest] : [];
          pendingBytes = rest.length;
        }
      }
      if (pendingBytes > 0) await write(pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes));
      await Promise.all(inFlight);
      if (writeFailure !== undefined) throw writeFailure.error;
      await this.commit(key, uploadId, total, sequence);
    } catch (error) {
      await Promise.allSettled(inFlight);
      await this.discardUpload(uploadId).catch(() => undefined);
      throw error;
    }
    return total;
  }

  /** Points `key` at the finished upload and drops the chunks of the blob it replaces, atomically. */
  private async commit(key: string, uploadId: string, bytes: number, chunks: number): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL synchronous_commit = on');
      // Two puts of one key commit one after the other, so neither leaves the other's chunks behind.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('switchyard-blob:' || $1))", [key]);
      const registered = await client.query('DELETE FROM blob_uploads WHERE upload_id = $1', [uploadId]);
      if (registered.rowCount !== 1) throw new Error(`The upload of blob ${key} was swept as abandoned before it finished.`);
      const previous = await client.query<{ upload_id: string }>('SELECT upload_id FROM blob_objects WHERE key = $1 FOR UPDATE', [key]);
      await client.query(
        `INSERT INTO blob_objects (key, upload_id, bytes, chunks, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (key) DO UPDATE SET upload_id = excluded.upload_id, bytes = excluded.bytes, chunks = excluded.chunks, created_at = excluded.created_at`,
        [key, uploadId, bytes, chunks, Date.now()],
      );
      const replaced = previous.rows[0]?.upload_id;
      if (replaced !== undefined) await client.query('DELETE FROM blob_chunks WHERE upload_id = $1', [replaced]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  private async discardUpload(uploadId: string): Promise<void> {
    await this.pool.query('DELETE FROM blob_chunks WHERE upload_id = $1', [uploadId]);
    await this.pool.query('DELETE FROM blob_uploads WHERE upload_id = $1', [uploadId]);
  }

  async get(key: string): Promise<Readable | undefined> {
    assertBlobKey(key);
    const found = await this.pool.query<{ upload_id: string; chunks: number }>(
      'SELECT upload_id, chunks FROM blob_objects WHERE key = $1',
      [key],
    );
    const object = found.rows[0];
    if (object === undefined) return undefined;
    return Readable.from(this.readChunks(key, object.upload_id, object.chunks), { objectMode: false });
  }

  /** The chunks in order, one query ahead of the reader; fails if the blob is deleted meanwhile. */
  private async *readChunks(key: string, uploadId: string, count: number): AsyncGenerator<Buffer> {
    const fetchFrom = (from: number): Promise<Buffer[]> => {
      const read = this.copyChunks(uploadId, from, Math.min(from + this.chunksPerRead, count));
      // Handled when awaited below; this keeps an abandoned read-ahead from being an unhandled rejection.
      read.catch(() => undefined);
      return read;
    };
    let from = 0;
    let ahead = count > 0 ? fetchFrom(0) : undefined;
    while (ahead !== undefined) {
      const chunks = await ahead;
      const until = Math.min(from + this.chunksPerRead, count);
      ahead = until < count ? fetchFrom(until) : undefined;
      if (chunks.length !== until - from) throw new Error(`Blob ${key} was deleted or replaced while it was being read.`);
      yield* chunks;
      from = until;
    }
  }

  /**
   * Chunks `from` until `until` (exclusive) of an upload, through `COPY ... TO STDOUT (FORMAT binary)`
   * (pg-copy-streams `copyTo`, rows split by binary-copy-rows.ts). A plain SELECT would get each bytea
   * as hex text (pg 8 cannot read binary results: pg-protocol decodes every field as UTF-8, which
   * mangles bytes; brianc/node-postgres#3495), so the server would hex-encode and send twice the bytes
   * and the client would decode them: a third of the download throughput measured with COPY in
   * bench/blob-store.ts, with hex strings twice the size in memory. COPY takes no parameters, hence the
   * escaped literal.
   */
  private async copyChunks(uploadId: string, from: number, until: number): Promise<Buffer[]> {
    const client = await this.pool.connect();
    try {
      const stream = client.query(
        copyTo(
          `COPY (SELECT data FROM blob_chunks WHERE upload_id = ${pg.escapeLiteral(uploadId)} AND seq >= ${from} AND seq < ${until} ORDER BY seq) TO STDOUT (FORMAT binary)`,
        ),
      );
      const rows = new BinaryCopyRows();
      for await (const chunk of stream) rows.push(chunk as Buffer);
      const chunks = rows.end();
      client.release();
      return chunks;
    } catch (error) {
      // The connection may be mid-protocol or broken: the pool replaces it rather than reuse it.
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    await this.pool.query(
      'WITH gone AS (DELETE FROM blob_objects WHERE key = $1 RETURNING upload_id) DELETE FROM blob_chunks WHERE upload_id IN (SELECT upload_id FROM gone)',
      [key],
    );
  }

  async check(): Promise<void> {
    await this.pool.query('SELECT 1 FROM blob_objects LIMIT 1');
  }

  async removeAbandoned(olderThanMs: number, now = Date.now()): Promise<number> {
    const abandoned = await this.pool.query<{ upload_id: string }>('DELETE FROM blob_uploads WHERE touched_at < $1 RETURNING upload_id', [
      now - olderThanMs,
    ]);
    for (const row of abandoned.rows) await this.pool.query('DELETE FROM blob_chunks WHERE upload_id = $1', [row.upload_id]);
    return abandoned.rows.length;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
