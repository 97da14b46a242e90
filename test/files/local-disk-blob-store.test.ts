// The local-disk blob store on a real temporary directory: atomic puts, streams back, deletes.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import { BlobTooLargeError } from '../../src/files/blob-store.ts';
import { LocalDiskBlobStore } from '../../src/files/local-disk/local-disk-blob-store.ts';

describe('LocalDiskBlobStore', () => {
  let root: string;
  let store: LocalDiskBlobStore;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-blobs-'));
    store = new LocalDiskBlobStore(join(root, 'files'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test('put streams the bytes in, reports the size, and get streams them back', async () => {
    const written = await store.put('file-abc', Readable.from(['{"a":1}\n', Buffer.from('{"b":2}\n')]));
    assert.equal(written, 16);
    const content = await store.get('file-abc');
    assert.ok(content !== undefined);
    assert.equal(await text(content), '{"a":1}\n{"b":2}\n');
  });

  test('an async generator is a valid source; a second put replaces the blob', async () => {
    async function* chunks() {
      yield 'first';
    }
    await store.put('file-replace', chunks());
    await store.put('file-replace', ['second version']);
    assert.equal(await text((await store.get('file-replace'))!), 'second version');
  });

  test('nothing is visible under the key while a put is still receiving bytes', async () => {
    const source = new PassThrough();
    const putting = store.put('file-slow', source);
    source.write('partial line');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await store.get('file-slow'), undefined);
    source.end(' and the rest');
    assert.equal(await putting, 25);
    assert.equal(await text((await store.get('file-slow'))!), 'partial line and the rest');
  });

  test('a source that fails half-way leaves nothing behind, not even a temporary file', async () => {
    const source = new PassThrough();
    const putting = store.put('file-broken', source);
    source.write('some bytes');
    source.destroy(new Error('client went away'));
    await assert.rejects(putting, /client went away/);
    assert.equal(await store.get('file-broken'), undefined);
    assert.deepEqual(
      readdirSync(store.directory).filter((name) => name.includes('file-broken')),
      [],
    );
  });

  test('more than maxBytes is refused with BlobTooLargeError and nothing is kept', async () => {
    await assert.rejects(store.put('file-big', [Buffer.alloc(600), Buffer.alloc(600)], { maxBytes: 1000 }), BlobTooLargeError);
    assert.equal(await store.get('file-big'), undefined);
    assert.equal(await store.put('file-exact', [Buffer.alloc(1000)], { maxBytes: 1000 }), 1000);
  });

  test('delete removes the blob and is quiet about missing ones', async () => {
    await store.put('file-gone', ['x']);
    await store.delete('file-gone');
    assert.equal(await store.get('file-gone'), undefined);
    await store.delete('file-gone');
    assert.equal(await store.get('file-never-was'), undefined);
  });

  test('keys that could escape the directory are refused', async () => {
    await assert.rejects(store.put('../escape', ['x']), /Invalid blob key/);
    await assert.rejects(store.get('a/b'), /Invalid blob key/);
    await assert.rejects(store.delete(''), /Invalid blob key/);
  });

  test('abandoned temporary files from a dead writer are swept, fresh ones kept', async () => {
    const old = join(store.directory, '.file-dead.abc.partial');
    const fresh = join(store.directory, '.file-live.def.partial');
    writeFileSync(old, 'half');
    writeFileSync(fresh, 'half');
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, anHourAgo, anHourAgo);
    assert.equal(await store.removeAbandoned(60_000), 1);
    assert.equal(existsSync(old), false);
    assert.equal(existsSync(fresh), true);
  });
});
