// One suite for every blob store backend, as the service uses them: local disk (always), Postgres
// (a fresh database on TEST_DATABASE_URL; skipped LOUDLY without it) and S3 (against s3rver, a real S3
// wire server started here). Each backend must stream, refuse oversize content without keeping
// anything, hide a put until it completes and leave nothing behind when a put fails.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { loadConfig } from '../../src/config/index.ts';
import { randomHex } from '../../src/core/ids.ts';
import { createBlobStore } from '../../src/files/create-blob-store.ts';
import { openDatabase } from '../../src/db/database.ts';
import { BlobTooLargeError, type BlobStore } from '../../src/files/blob-store.ts';
import { LocalDiskBlobStore } from '../../src/files/local-disk/local-disk-blob-store.ts';
import { PostgresBlobStore } from '../../src/files/postgres/postgres-blob-store.ts';
import { S3BlobStore } from '../../src/files/s3/s3-blob-store.ts';
import { createPostgresTestDatabase } from '../support/databases.ts';
import { S3_TEST_CREDENTIALS, startS3Server } from '../support/s3-server.ts';

/** A backend under test: the store, plus a look at its storage for anything a failed put left. */
interface Backend {
  store: BlobStore;
  /** Names of stored things (temporary files, chunk rows, objects) that mention no committed blob. */
  leftovers(): Promise<string[]>;
  /** Leaves what a writer killed mid-put two hours ago would leave; undefined where the backend cannot. */
  abandonUpload?(): Promise<void>;
  teardown(): Promise<void>;
}

type BackendName = 'local' | 'postgres' | 's3';

function backendNames(): BackendName[] {
  if (process.env['TEST_DATABASE_URL']) return ['local', 'postgres', 's3'];
  console.warn('\n*** SKIPPED: blob store suite on Postgres (set TEST_DATABASE_URL=postgres://127.0.0.1:5432/test to run it) ***\n');
  return ['local', 's3'];
}

async function openBackend(name: BackendName): Promise<Backend> {
  if (name === 'local') {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-blobs-'));
    const store = new LocalDiskBlobStore(join(root, 'files'));
    return {
      store,
      leftovers: async () => readdirSync(store.directory).filter((entry) => entry.startsWith('.')),
      async abandonUpload() {
        const path = join(store.directory, '.file-dead.abc.partial');
        writeFileSync(path, 'half');
        const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
        utimesSync(path, twoHoursAgo, twoHoursAgo);
      },
      teardown: async () => rmSync(root, { recursive: true, force: true }),
    };
  }
  if (name === 'postgres') {
    const database = await createPostgresTestDatabase();
    assert.ok(database !== undefined);
    const migrated = openDatabase(database.url);
    await migrated.migrate();
    await migrated.close();
    // Small chunks and reads of three chunks: every test crosses chunk and read boundaries.
    const store = new PostgresBlobStore({ connectionString: database.url, chunkBytes: 64 * 1024, chunksPerRead: 3 });
    const inspector = new pg.Client({ connectionString: database.url });
    await inspector.connect();
    return {
      store,
      async leftovers() {
        const uploads = await inspector.query<{ upload_id: string }>('SELECT upload_id FROM blob_uploads');
        const orphans = await inspector.query<{ upload_id: string }>(
          'SELECT DISTINCT upload_id FROM blob_chunks WHERE upload_id NOT IN (SELECT upload_id FROM blob_objects)',
        );
        return [...uploads.rows.map((row) => `upload ${row.upload_id}`), ...orphans.rows.map((row) => `chunks ${row.upload_id}`)];
      },
      async abandonUpload() {
        const deadId = randomHex(16);
        await inspector.query('INSERT INTO blob_uploads (upload_id, touched_at) VALUES ($1, $2)', [deadId, Date.now() - 2 * 3_600_000]);
        await inspector.query('INSERT INTO blob_chunks (upload_id, seq, data) VALUES ($1, 0, $2)', [deadId, Buffer.from('half')]);
      },
      async teardown() {
        await store.close();
        await inspector.end();
        await database.drop();
      },
    };
  }
  const server = await startS3Server(['switchyard-test']);
  const prefix = `runs/${randomHex(6)}`;
  const options = { bucket: 'switchyard-test', prefix, endpoint: server.endpoint, region: 'us-east-1', credentials: S3_TEST_CREDENTIALS };
  // Built as the service builds it, from the (frozen) config; the 20 MiB blob below spans four 5 MiB
  // parts, a real multipart upload.
  const store = await createBlobStore(loadConfig({ env: { FILES_STORE: `s3://${options.bucket}/${prefix}`, ...server.env() } }).filesStore);
  assert.ok(store instanceof S3BlobStore);
  const client = new S3Client({ region: 'us-east-1', endpoint: server.endpoint, forcePathStyle: true, credentials: S3_TEST_CREDENTIALS });
  return {
    store,
    async leftovers() {
      // Only committed objects exist in S3; a failed put must not have created its key.
      const listed = await client.send(new ListObjectsV2Command({ Bucket: 'switchyard-test', Prefix: `${prefix}/` }));
      return (listed.Contents ?? []).map((object) => object.Key ?? '').filter((key) => /broken|big|refused/.test(key));
    },
    async teardown() {
      await store.close();
      client.destroy();
      await server.close();
    },
  };
}

/** 64 KiB of bytes that differ with the seed and the index (a SHA-512 digest, repeated). */
function piece(seed: number, index: number): Buffer {
  const digest = createHash('sha512').update(`${seed}:${index}`).digest();
  const buffer = Buffer.allocUnsafe(65_536);
  for (let offset = 0; offset < buffer.length; offset += digest.length) digest.copy(buffer, offset);
  return buffer;
}

/** `megabytes` MiB of deterministic bytes in 64 KiB pieces, as a fresh source each call, and their SHA-256. */
function generated(megabytes: number, seed: number): { source: () => AsyncGenerator<Buffer>; sha256: string } {
  const pieces = megabytes * 16;
  const hash = createHash('sha256');
  for (let index = 0; index < pieces; index++) hash.update(piece(seed, index));
  return {
    async *source() {
      for (let index = 0; index < pieces; index++) yield piece(seed, index);
    },
    sha256: hash.digest('hex'),
  };
}

async function sha256Of(stream: Readable): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

for (const name of backendNames()) {
  describe(`blob store: ${name}`, () => {
    let backend: Backend;
    let store: BlobStore;

    before(async () => {
      backend = await openBackend(name);
      store = backend.store;
    });
    after(() => backend.teardown());

    test('put streams the bytes in and reports the size; get streams them back', async () => {
      assert.equal(await store.put('file-round', Readable.from(['{"a":1}\n', Buffer.from('{"b":2}\n')])), 16);
      assert.equal(await text((await store.get('file-round'))!), '{"a":1}\n{"b":2}\n');
      assert.equal(await store.put('file-empty', []), 0);
      assert.equal(await text((await store.get('file-empty'))!), '');
      await store.check();
    });

    test('an async generator is a valid source; a second put replaces the blob', async () => {
      async function* chunks() {
        yield 'first version, ';
        yield new Uint8Array(Buffer.from('in two pieces'));
      }
      await store.put('file-replace', chunks());
      assert.equal(await text((await store.get('file-replace'))!), 'first version, in two pieces');
      await store.put('file-replace', ['second']);
      assert.equal(await text((await store.get('file-replace'))!), 'second');
      assert.deepEqual(await backend.leftovers(), []);
    });

    test('a 20 MiB blob streams through both ways intact', async () => {
      const content = generated(20, 1);
      assert.equal(await store.put('file-large', content.source()), 20 * 1024 * 1024);
      assert.deepEqual(await sha256Of((await store.get('file-large'))!), { sha256: content.sha256, bytes: 20 * 1024 * 1024 });
    });

    test('a blob deleted while it is being read gives its whole content or an error, never a silent cut', async () => {
      // Postgres reads a few chunks per query, so a reader can outlive the chunks it has not read yet.
      const content = generated(3, 3);
      await store.put('file-moving', content.source());
      const reader = (await store.get('file-moving'))![Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      const hash = createHash('sha256');
      let bytes = 0;
      const first = await reader.next();
      assert.equal(first.done, false);
      hash.update(first.value);
      bytes += first.value.length;
      await store.delete('file-moving');
      try {
        for (let next = await reader.next(); next.done !== true; next = await reader.next()) {
          hash.update(next.value);
          bytes += next.value.length;
        }
      } catch (error) {
        assert.ok(error instanceof Error, String(error));
        assert.ok(bytes < 3 * 1024 * 1024);
        return;
      }
      assert.deepEqual({ sha256: hash.digest('hex'), bytes }, { sha256: content.sha256, bytes: 3 * 1024 * 1024 });
    });

    test('nothing is visible under the key while a put is still receiving bytes', async () => {
      const source = new PassThrough();
      const putting = store.put('file-slow', source);
      source.write(Buffer.alloc(200_000, 'a'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await store.get('file-slow'), undefined);
      source.end('and the rest');
      assert.equal(await putting, 200_012);
      assert.equal((await text((await store.get('file-slow'))!)).length, 200_012);
    });

    test('a source that fails half-way is reported and leaves nothing behind', async () => {
      const source = new PassThrough();
      const putting = store.put('file-broken', source);
      source.write(Buffer.alloc(300_000, 'b'));
      setTimeout(() => source.destroy(new Error('client went away')), 20);
      await assert.rejects(putting, /client went away/);
      assert.equal(await store.get('file-broken'), undefined);
      assert.deepEqual(await backend.leftovers(), []);
    });

    test('a source that fails before the store reads it is reported, does not end the process, and leaves nothing behind', async () => {
      // Destroyed while the put still awaits its directory or its first query: before the fix the
      // stream's 'error' had no listener yet and was an uncaught exception.
      const source = new PassThrough();
      const putting = store.put('file-early', source);
      source.destroy(new Error('gone before the first read'));
      await assert.rejects(putting, /gone before the first read/);
      assert.equal(await store.get('file-early'), undefined);
      assert.deepEqual(await backend.leftovers(), []);
    });

    test('more than maxBytes is refused with BlobTooLargeError and nothing is kept', async () => {
      const big = generated(7, 2);
      await assert.rejects(store.put('file-refused', big.source(), { maxBytes: 6 * 1024 * 1024 }), BlobTooLargeError);
      assert.equal(await store.get('file-refused'), undefined);
      await assert.rejects(store.put('file-big', [Buffer.alloc(600), Buffer.alloc(600)], { maxBytes: 1000 }), BlobTooLargeError);
      assert.equal(await store.get('file-big'), undefined);
      assert.deepEqual(await backend.leftovers(), []);
      assert.equal(await store.put('file-exact', [Buffer.alloc(1000)], { maxBytes: 1000 }), 1000);
    });

    test('a missing key reads as undefined; delete removes and is idempotent', async () => {
      assert.equal(await store.get('file-never-was'), undefined);
      await store.put('file-gone', ['x']);
      await store.delete('file-gone');
      assert.equal(await store.get('file-gone'), undefined);
      await store.delete('file-gone');
      await store.delete('file-never-was');
    });

    test('concurrent puts to different keys each keep their own bytes', async () => {
      const contents = Array.from({ length: 8 }, (_, index) => generated(1, 100 + index));
      const sizes = await Promise.all(contents.map((content, index) => store.put(`file-concurrent-${index}`, content.source())));
      assert.deepEqual(
        sizes,
        contents.map(() => 1024 * 1024),
      );
      for (const [index, content] of contents.entries()) {
        assert.equal((await sha256Of((await store.get(`file-concurrent-${index}`))!)).sha256, content.sha256, `blob ${index}`);
      }
      assert.deepEqual(await backend.leftovers(), []);
    });

    test('what a put killed with its process left behind is swept once stale, and nothing else', async (context) => {
      if (backend.abandonUpload === undefined) return context.skip('S3 expires incomplete uploads by a bucket lifecycle rule');
      await store.put('file-kept', ['kept']);
      await backend.abandonUpload();
      assert.notDeepEqual(await backend.leftovers(), []);
      assert.equal(await store.removeAbandoned(60 * 60 * 1000), 1);
      assert.deepEqual(await backend.leftovers(), []);
      assert.equal(await text((await store.get('file-kept'))!), 'kept');
    });

    test('keys that could escape their namespace are refused', async () => {
      await assert.rejects(store.put('../escape', ['x']), /Invalid blob key/);
      await assert.rejects(store.get('a/b'), /Invalid blob key/);
      await assert.rejects(store.delete(''), /Invalid blob key/);
    });
  });
}
