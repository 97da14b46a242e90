// The file service over a real SQLite file and a real blob directory: uploads in any part order,
// nothing kept on failure, organization isolation, expiry, deletion, images and signed links.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import { isServiceError } from '../../src/core/service-error.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { FilesRepository } from '../../src/db/repositories/files-repository.ts';
import { LocalDiskBlobStore } from '../../src/files/local-disk/local-disk-blob-store.ts';
import { FileService, mediaTypeFor, type UploadPart } from '../../src/services/files/file-service.ts';
import { ManualClock } from '../batches/support/manual-clock.ts';

function filePart(content: string, filename = 'input.jsonl', truncated = false): UploadPart {
  return {
    kind: 'file',
    name: 'file',
    filename,
    mediaType: 'application/octet-stream',
    content: Readable.from([Buffer.from(content)]),
    isTruncated: () => truncated,
  };
}

function field(name: string, value: string): UploadPart {
  return { kind: 'field', name, value };
}

async function* parts(...items: UploadPart[]): AsyncGenerator<UploadPart> {
  yield* items;
}

async function rejectsWith(promise: Promise<unknown>, status: number, code: string, param?: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isServiceError(error), String(error));
    assert.equal(error.status, status);
    assert.equal(error.code, code);
    if (param !== undefined) assert.equal(error.param, param);
    return true;
  });
}

describe('FileService', () => {
  let directory: string;
  let database: Database;
  let files: FileService;
  let blobDirectory: string;
  const clock = new ManualClock();

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'switchyard-files-'));
    database = openDatabase(`sqlite:${join(directory, 'test.db')}`);
    await database.migrate();
    blobDirectory = join(directory, 'files');
    files = new FileService({ repository: new FilesRepository(database.db), store: new LocalDiskBlobStore(blobDirectory), clock });
    await files.start();
  });
  after(async () => {
    await database.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const storedBlobs = () => readdirSync(blobDirectory).filter((name) => !name.startsWith('.'));

  test('upload: the file part may come before purpose; the record and the bytes are kept', async () => {
    const file = await files.upload('org-a', parts(filePart('{"a":1}\n', 'dir/../batch.jsonl'), field('purpose', 'batch')), 1000);
    assert.match(file.id, /^file-[A-Za-z0-9]{24}$/);
    assert.equal(file.filename, 'batch.jsonl');
    assert.equal(file.bytes, 8);
    assert.equal(file.purpose, 'batch');
    assert.equal(file.mediaType, 'application/jsonl');
    assert.equal(file.createdAt, clock.now());
    assert.equal(file.expiresAt, clock.now() + 30 * 86_400_000, 'batch input expires after 30 days by default');
    const opened = await files.openContent('org-a', file.id);
    assert.equal(await text(opened.content), '{"a":1}\n');
  });

  test('upload refusals keep nothing: bad purpose, missing purpose, missing file, plain-field file, too large', async () => {
    const before = storedBlobs().length;
    await rejectsWith(
      files.upload('org-a', parts(filePart('x'), field('purpose', 'fine-tune')), 1000),
      400,
      'invalid_parameter',
      'purpose',
    );
    await rejectsWith(files.upload('org-a', parts(filePart('x')), 1000), 400, 'missing_parameter', 'purpose');
    await rejectsWith(files.upload('org-a', parts(field('purpose', 'batch')), 1000), 400, 'missing_parameter', 'file');
    // A batch input must be JSON Lines: a .txt upload with purpose batch is refused up front (issue 40 item 10).
    await rejectsWith(
      files.upload('org-a', parts(field('purpose', 'batch'), filePart('plain notes', 'notes.txt')), 1000),
      400,
      'invalid_parameter',
      'file',
    );
    await rejectsWith(
      files.upload('org-a', parts(field('purpose', 'batch'), field('file', 'inline text')), 1000),
      400,
      'invalid_parameter',
      'file',
    );
    await rejectsWith(
      files.upload('org-a', parts(field('purpose', 'batch'), filePart('x'.repeat(10), 'big.jsonl', true)), 10),
      413,
      'file_too_large',
      'file',
    );
    await rejectsWith(files.upload('org-a', parts(field('purpose', 'batch'), filePart('x'.repeat(11))), 10), 413, 'file_too_large');
    assert.equal(storedBlobs().length, before);
    assert.deepEqual(
      readdirSync(blobDirectory).filter((name) => name.startsWith('.')),
      [],
      'no temporary file left either',
    );
  });

  test('a second file part is read and ignored; purpose values other than batch never expire by default', async () => {
    const extra: UploadPart = {
      kind: 'file',
      name: 'other',
      filename: 'x.txt',
      mediaType: 'text/plain',
      content: Readable.from(['ignored']),
      isTruncated: () => false,
    };
    const file = await files.upload('org-a', parts(field('purpose', 'user_data'), extra, filePart('hello', 'notes.txt')), 1000);
    assert.equal(file.expiresAt, null);
    assert.equal(file.mediaType, 'text/plain');
    assert.equal(await text((await files.openContent('org-a', file.id)).content), 'hello');
  });

  test('expires_after: anchored at created_at, 3600 to 2592000 seconds', async () => {
    const file = await files.upload(
      'org-a',
      parts(
        field('purpose', 'user_data'),
        field('expires_after[anchor]', 'created_at'),
        field('expires_after[seconds]', '3600'),
        filePart('x'),
      ),
      1000,
    );
    assert.equal(file.expiresAt, clock.now() + 3_600_000);
    await rejectsWith(
      files.upload(
        'org-a',
        parts(
          field('purpose', 'user_data'),
          field('expires_after[anchor]', 'created_at'),
          field('expires_after[seconds]', '60'),
          filePart('x'),
        ),
        1000,
      ),
      400,
      'invalid_parameter',
      'expires_after.seconds',
    );
    await rejectsWith(
      files.upload('org-a', parts(field('purpose', 'user_data'), field('expires_after[anchor]', 'now'), filePart('x')), 1000),
      400,
      'invalid_parameter',
      'expires_after.anchor',
    );
  });

  test('another organization sees 404 file_not_found for retrieve, content, delete', async () => {
    const file = await files.upload('org-a', parts(field('purpose', 'batch'), filePart('x')), 1000);
    await rejectsWith(files.retrieve('org-b', file.id), 404, 'file_not_found');
    await rejectsWith(files.openContent('org-b', file.id), 404, 'file_not_found');
    await rejectsWith(files.delete('org-b', file.id), 404, 'file_not_found');
    await rejectsWith(files.retrieve('org-a', 'file-unknown'), 404, 'file_not_found');
    assert.equal((await files.retrieve('org-a', file.id)).id, file.id);
  });

  test('delete marks the file deleted and removes its bytes; a second delete is 404', async () => {
    const file = await files.upload('org-a', parts(field('purpose', 'batch'), filePart('x')), 1000);
    assert.ok(storedBlobs().includes(file.id));
    const deleted = await files.delete('org-a', file.id);
    assert.equal(deleted.deletedAt, clock.now());
    assert.ok(!storedBlobs().includes(file.id));
    await rejectsWith(files.retrieve('org-a', file.id), 404, 'file_not_found');
    await rejectsWith(files.delete('org-a', file.id), 404, 'file_not_found');
  });

  test('an expired file answers 410 file_expired, leaves the list, and its bytes are purged', async () => {
    const file = await files.upload(
      'org-x',
      parts(
        field('purpose', 'user_data'),
        field('expires_after[anchor]', 'created_at'),
        field('expires_after[seconds]', '3600'),
        filePart('x'),
      ),
      1000,
    );
    assert.deepEqual(
      (await files.list('org-x', { limit: 10, order: 'desc' })).files.map((entry) => entry.id),
      [file.id],
    );
    clock.advance(3_600_000);
    await rejectsWith(files.retrieve('org-x', file.id), 410, 'file_expired');
    await rejectsWith(files.openContent('org-x', file.id), 410, 'file_expired');
    assert.deepEqual((await files.list('org-x', { limit: 10, order: 'desc' })).files, []);
    assert.ok((await files.purgeExpired()) >= 1);
    assert.ok(!storedBlobs().includes(file.id));
    // An expired file may still be deleted by its owner.
    assert.equal((await files.delete('org-x', file.id)).id, file.id);
  });

  test('list pages with has_more, an after cursor, order and a purpose filter', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      clock.advance(1);
      ids.push(
        (
          await files.upload(
            'org-list',
            parts(field('purpose', index === 2 ? 'vision' : 'batch'), filePart(`${index}`, `f${index}.jsonl`)),
            1000,
          )
        ).id,
      );
    }
    const first = await files.list('org-list', { limit: 2, order: 'desc' });
    assert.deepEqual(
      first.files.map((file) => file.id),
      [ids[4], ids[3]],
    );
    assert.equal(first.hasMore, true);
    const second = await files.list('org-list', { limit: 3, order: 'desc', after: ids[3]! });
    assert.deepEqual(
      second.files.map((file) => file.id),
      [ids[2], ids[1], ids[0]],
    );
    assert.equal(second.hasMore, false);
    assert.deepEqual(
      (await files.list('org-list', { limit: 10, order: 'asc', purpose: 'vision' })).files.map((file) => file.id),
      [ids[2]],
    );
    await rejectsWith(files.list('org-list', { limit: 10, order: 'desc', after: 'file-nope' }), 400, 'invalid_parameter', 'after');
  });

  test('storeImage + signedFileUrl: the link serves the image; expired and tampered links are refused', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const fileId = await files.storeImage(png, 'image/png', 'org-img');
    const stored = await files.retrieve('org-img', fileId);
    assert.equal(stored.purpose, 'image_output');
    assert.equal(stored.mediaType, 'image/png');
    assert.equal(stored.filename, `${fileId}.png`);
    const url = new URL(files.signedFileUrl('http://127.0.0.1:1234', fileId, 60));
    assert.equal(url.pathname, `/v1/files/${fileId}/signed-content`);
    const expires = url.searchParams.get('expires')!;
    const signature = url.searchParams.get('signature')!;
    const opened = await files.openSignedContent(fileId, expires, signature);
    assert.deepEqual(Buffer.from(await opened.content.toArray().then((chunks) => Buffer.concat(chunks))), png);
    await rejectsWith(
      files.openSignedContent(fileId, expires, `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`),
      403,
      'invalid_signature',
    );
    await rejectsWith(files.openSignedContent(fileId, String(Number(expires) + 1), signature), 403, 'invalid_signature');
    clock.advance(61_000);
    await rejectsWith(files.openSignedContent(fileId, expires, signature), 403, 'url_expired');
  });

  test('every instance on the same database agrees on the signing secret', async () => {
    const other = new FileService({ repository: new FilesRepository(database.db), store: new LocalDiskBlobStore(blobDirectory), clock });
    await other.start();
    const fileId = await files.storeImage(Buffer.from('img'), 'image/webp', 'org-img');
    const url = new URL(files.signedFileUrl('http://a', fileId, 60));
    const opened = await other.openSignedContent(fileId, url.searchParams.get('expires')!, url.searchParams.get('signature')!);
    assert.equal(await text(opened.content), 'img');
  });

  test('a streamed upload is written as it arrives', async () => {
    const source = new PassThrough();
    const uploading = files.upload(
      'org-a',
      parts(field('purpose', 'batch'), {
        kind: 'file',
        name: 'file',
        filename: 's.jsonl',
        mediaType: '',
        content: source,
        isTruncated: () => false,
      }),
      1000,
    );
    source.write('{"line":1}\n');
    source.end('{"line":2}\n');
    const file = await uploading;
    assert.equal(file.bytes, 22);
  });

  test('media types: JSONL for batch files, a safe list otherwise, octet-stream for the rest', () => {
    assert.equal(mediaTypeFor('batch', 'x.bin', 'text/html'), 'application/jsonl');
    assert.equal(mediaTypeFor('user_data', 'page.html', 'text/html'), 'application/octet-stream');
    assert.equal(mediaTypeFor('vision', 'photo.JPG', 'application/octet-stream'), 'image/jpeg');
    assert.equal(mediaTypeFor('user_data', 'data.csv', 'text/csv; charset=utf-8'), 'text/csv');
  });
});
