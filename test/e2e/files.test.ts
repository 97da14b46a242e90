// Files end to end: a real server, the official openai SDK (buffered and streamed uploads), raw HTTP
// for what the SDK hides (chunked uploads, headers, envelopes), signed links for generated images.
import assert from 'node:assert/strict';
import { createReadStream, readdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile, toStreamingFile } from 'openai';
import { ManualClock } from '../batches/support/manual-clock.ts';
import { startBatchTestServer, type BatchTestServer } from '../batches/support/batch-test-server.ts';

const JSONL =
  '{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"switchyard-echo","messages":[{"role":"user","content":"hi"}]}}\n';

async function raw(server: BatchTestServer, path: string, init: RequestInit & { key?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.key !== '') headers.set('authorization', `Bearer ${init.key ?? server.key}`);
  const response = await fetch(`${server.origin}${path}`, { ...init, headers });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Raw file content.
  }
  return { status: response.status, headers: response.headers, body };
}

function assertFileError(body: any, status: { code: string; type?: string }): void {
  assert.deepEqual(Object.keys(body).sort(), ['error', 'info_metadata']);
  assert.equal(body.error.code, status.code);
  assert.equal(body.error.type, status.type ?? 'invalid_request_error');
  assert.equal(typeof body.error.message, 'string');
}

/** A multipart upload sent with Transfer-Encoding: chunked and no Content-Length, piece by piece. */
function chunkedUpload(
  server: BatchTestServer,
  pieces: string[],
): Promise<{ status: number; body: any; sentHeaders: Record<string, unknown> }> {
  const boundary = '----switchyard-test-boundary';
  const body = [
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="streamed.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`,
    ...pieces,
    `\r\n--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}--\r\n`,
  ];
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${server.origin}/v1/files`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    });
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text), sentHeaders: request.getHeaders() }));
    });
    request.on('error', reject);
    const writeNext = (index: number): void => {
      if (index === body.length) {
        request.end();
        return;
      }
      request.write(body[index]);
      setTimeout(() => writeNext(index + 1), 5);
    };
    writeNext(0);
  });
}

describe('files end to end', () => {
  let server: BatchTestServer;
  let client: OpenAI;
  const clock = new ManualClock(Date.now());

  before(async () => {
    server = await startBatchTestServer({ runtime: { clock, batchWorker: false } });
    client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
  });
  after(async () => {
    await server.close();
  });

  test('files.create with toFile(Buffer): the File object, with _metadata on the raw answer', async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from(JSONL), 'input.jsonl'), purpose: 'batch' });
    assert.match(file.id, /^file-/);
    assert.equal(file.object, 'file');
    assert.equal(file.purpose, 'batch');
    assert.equal(file.filename, 'input.jsonl');
    assert.equal(file.bytes, Buffer.byteLength(JSONL));
    assert.equal(file.status, 'uploaded');
    assert.equal(file.status_details, null);
    assert.equal(typeof file.created_at, 'number');
    assert.equal(file.expires_at, file.created_at + 30 * 86_400);
    const { status, body } = await raw(server, `/v1/files/${file.id}`);
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body).sort(), [
      '_metadata',
      'bytes',
      'created_at',
      'expires_at',
      'filename',
      'id',
      'object',
      'purpose',
      'status',
      'status_details',
    ]);
    assert.equal(body._metadata.status, true);
  });

  test('streamed uploads: a file stream and toStreamingFile through the SDK, and raw chunked encoding', async () => {
    const path = join(server.dataDir, 'local-input.jsonl');
    writeFileSync(path, JSONL.repeat(50));
    const fromStream = await client.files.create({ file: createReadStream(path), purpose: 'batch' });
    assert.equal(fromStream.bytes, Buffer.byteLength(JSONL) * 50);
    assert.equal(fromStream.filename, 'local-input.jsonl');
    async function* generate() {
      for (let index = 0; index < 20; index++) yield Buffer.from(JSONL);
    }
    const streaming = await client.files.create({ file: toStreamingFile(generate(), 'generated.jsonl'), purpose: 'batch' });
    assert.equal(streaming.bytes, Buffer.byteLength(JSONL) * 20);
    const content = await (await client.files.content(streaming.id)).text();
    assert.equal(content, JSONL.repeat(20));

    const chunked = await chunkedUpload(server, [JSONL.slice(0, 10), JSONL.slice(10, 40), JSONL.slice(40)]);
    assert.equal(chunked.sentHeaders['content-length'], undefined);
    assert.equal(chunked.sentHeaders['transfer-encoding'], 'chunked');
    assert.equal(chunked.status, 200);
    assert.equal(chunked.body.bytes, Buffer.byteLength(JSONL));
    assert.equal(chunked.body.filename, 'streamed.jsonl');
  });

  test('retrieve, content (raw JSONL, not wrapped), delete; then 404 file_not_found everywhere', async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from(JSONL), 'to-delete.jsonl'), purpose: 'batch' });
    assert.equal((await client.files.retrieve(file.id)).filename, 'to-delete.jsonl');
    const response = await client.files.content(file.id);
    assert.equal(response.headers.get('content-type'), 'application/jsonl');
    assert.equal(await response.text(), JSONL);
    const deleted = await client.files.delete(file.id);
    assert.deepEqual({ id: deleted.id, object: deleted.object, deleted: deleted.deleted }, { id: file.id, object: 'file', deleted: true });
    await assert.rejects(
      client.files.retrieve(file.id),
      (error: unknown) => error instanceof OpenAI.NotFoundError && error.code === 'file_not_found',
    );
    await assert.rejects(client.files.content(file.id), OpenAI.NotFoundError);
    await assert.rejects(client.files.delete(file.id), OpenAI.NotFoundError);
    const missing = await raw(server, '/v1/files/file-doesnotexist');
    assert.equal(missing.status, 404);
    assertFileError(missing.body, { code: 'file_not_found' });
    assert.match(missing.body.error.message, /not found or access denied/);
    assert.ok(!readdirSync(join(server.dataDir, 'files')).includes(file.id), 'the bytes are gone from storage');
  });

  test("another organization's file is 404 file_not_found, exactly like a missing one", async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from('secret'), 'secret.txt'), purpose: 'user_data' });
    const stranger = await server.createKey({ organization: 'org-stranger' });
    const strangerClient = new OpenAI({ apiKey: stranger.key, baseURL: server.baseUrl, maxRetries: 0 });
    await assert.rejects(
      strangerClient.files.retrieve(file.id),
      (error: unknown) => error instanceof OpenAI.NotFoundError && error.code === 'file_not_found',
    );
    await assert.rejects(strangerClient.files.content(file.id), OpenAI.NotFoundError);
    await assert.rejects(strangerClient.files.delete(file.id), OpenAI.NotFoundError);
    assert.ok(!(await strangerClient.files.list()).data.some((entry) => entry.id === file.id));
    // The same organization (another key) sees it.
    const colleague = await server.createKey();
    assert.equal((await new OpenAI({ apiKey: colleague.key, baseURL: server.baseUrl, maxRetries: 0 }).files.retrieve(file.id)).id, file.id);
  });

  test('list: newest first, SDK auto-pagination across pages, purpose filter, order, bad parameters', async () => {
    const lister = await server.createKey({ organization: 'org-lister' });
    const listClient = new OpenAI({ apiKey: lister.key, baseURL: server.baseUrl, maxRetries: 0 });
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      clock.advance(1_000);
      ids.push(
        (
          await listClient.files.create({
            file: await toFile(Buffer.from(`${index}`), `f${index}.txt`),
            purpose: index === 0 ? 'vision' : 'user_data',
          })
        ).id,
      );
    }
    const seen: string[] = [];
    for await (const file of listClient.files.list({ limit: 2 })) seen.push(file.id);
    assert.deepEqual(seen, [...ids].reverse());
    const firstPage = await raw(server, '/v1/files?limit=2', { key: lister.key });
    assert.deepEqual(Object.keys(firstPage.body).sort(), ['_metadata', 'data', 'first_id', 'has_more', 'last_id', 'object']);
    assert.equal(firstPage.body.object, 'list');
    assert.equal(firstPage.body.has_more, true);
    assert.equal(firstPage.body.first_id, ids[4]);
    assert.equal(firstPage.body.last_id, ids[3]);
    assert.deepEqual(
      (await listClient.files.list({ purpose: 'vision' })).data.map((file) => file.id),
      [ids[0]],
    );
    assert.deepEqual(
      (await listClient.files.list({ order: 'asc', limit: 2 })).data.map((file) => file.id),
      [ids[0], ids[1]],
    );
    for (const query of ['limit=0', 'limit=10001', 'limit=abc', 'order=sideways', 'after=file-unknown']) {
      const refused = await raw(server, `/v1/files?${query}`, { key: lister.key });
      assert.equal(refused.status, 400, query);
      assert.equal(refused.body.error.code, 'invalid_parameter');
    }
  });

  test('upload errors: unknown purpose, missing file, missing purpose, not multipart', async () => {
    await assert.rejects(
      client.files.create({ file: await toFile(Buffer.from('x'), 'x.jsonl'), purpose: 'fine-tune' }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.code === 'invalid_parameter' && error.param === 'purpose',
    );
    const onlyPurpose = new FormData();
    onlyPurpose.append('purpose', 'batch');
    const missingFile = await raw(server, '/v1/files', { method: 'POST', body: onlyPurpose });
    assert.equal(missingFile.status, 400);
    assert.equal(missingFile.body.error.code, 'missing_parameter');
    assert.equal(missingFile.body.error.param, 'file');
    const onlyFile = new FormData();
    onlyFile.append('file', new Blob(['x']), 'x.jsonl');
    const missingPurpose = await raw(server, '/v1/files', { method: 'POST', body: onlyFile });
    assert.equal(missingPurpose.body.error.param, 'purpose');
    const json = await raw(server, '/v1/files', {
      method: 'POST',
      body: '{"purpose":"batch"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(json.status, 400);
    assert.equal(json.body.error.code, 'invalid_format');
  });

  test('malformed multipart is a 400, not a 500: no boundary; a body cut before its closing boundary', async () => {
    const before = readdirSync(join(server.dataDir, 'files'), { recursive: true }).length;
    const noBoundary = await raw(server, '/v1/files', {
      method: 'POST',
      body: '--x\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--x--\r\n',
      headers: { 'content-type': 'multipart/form-data' },
    });
    assert.equal(noBoundary.status, 400);
    assertFileError(noBoundary.body, { code: 'invalid_format' });
    assert.match(noBoundary.body.error.message, /boundary/i);

    const boundary = 'cut-short-boundary';
    for (const cut of [
      // Inside the file part: its content never ends.
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n${JSONL}`,
      // After a whole part, before the closing boundary.
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n${JSONL}\r\n--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch`,
      // Inside a part's headers.
      `--${boundary}\r\nContent-Disposition: form-da`,
    ]) {
      const truncated = await raw(server, '/v1/files', {
        method: 'POST',
        body: cut,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      assert.equal(truncated.status, 400, JSON.stringify(truncated.body));
      assertFileError(truncated.body, { code: 'invalid_format' });
      assert.match(truncated.body.error.message, /multipart/i);
    }
    // Nothing was kept, and the server still takes a good upload.
    assert.equal(readdirSync(join(server.dataDir, 'files'), { recursive: true }).length, before);
    const good = await client.files.create({ file: await toFile(Buffer.from(JSONL), 'good.jsonl'), purpose: 'batch' });
    assert.equal(good.bytes, Buffer.byteLength(JSONL));
  });

  test('a file past its expires_at answers 410 file_expired', async () => {
    const file = await client.files.create({
      file: await toFile(Buffer.from('soon gone'), 'short.txt'),
      purpose: 'user_data',
      expires_after: { anchor: 'created_at', seconds: 3600 },
    });
    assert.equal(file.expires_at, file.created_at + 3600);
    clock.advance(3_600_000);
    await assert.rejects(
      client.files.retrieve(file.id),
      (error: unknown) => error instanceof OpenAI.APIError && error.status === 410 && error.code === 'file_expired',
    );
    const expired = await raw(server, `/v1/files/${file.id}/content`);
    assert.equal(expired.status, 410);
    assertFileError(expired.body, { code: 'file_expired' });
  });

  test('generated images: a signed link works without a key; tampered or expired links are refused', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const fileId = await server.runtime.files.storeImage(png, 'image/png', 'org-main');
    const link = server.runtime.files.signedFileUrl(server.origin, fileId, 600);
    const fetched = await fetch(link);
    assert.equal(fetched.status, 200);
    assert.equal(fetched.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await fetched.arrayBuffer()), png);
    const tampered = new URL(link);
    tampered.searchParams.set('expires', String(Number(tampered.searchParams.get('expires')) + 60));
    const refused = await fetch(tampered);
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as any).error.code, 'invalid_signature');
    const otherFile = new URL(link.replace(fileId, 'file-somethingelse'));
    assert.equal((await fetch(otherFile)).status, 403);
    clock.advance(601_000);
    const late = await fetch(link);
    assert.equal(late.status, 403);
    assert.equal(((await late.json()) as any).error.code, 'url_expired');
    // The image is a file of its organization, retrievable by id, but kept out of the files list.
    assert.equal((await client.files.retrieve(fileId)).purpose, 'image_output');
    assert.equal(
      (await client.files.list()).data.some((entry) => entry.id === fileId),
      false,
    );
  });

  test('a key without the files permission is refused with 403', async () => {
    const limited = await server.createKey({ permissions: ['models'] });
    await assert.rejects(
      new OpenAI({ apiKey: limited.key, baseURL: server.baseUrl, maxRetries: 0 }).files.list(),
      OpenAI.PermissionDeniedError,
    );
  });
});

describe('files end to end: upload size limit', () => {
  let server: BatchTestServer;
  let client: OpenAI;

  before(async () => {
    server = await startBatchTestServer({ config: { server: { uploadLimitBytes: 1024 } }, runtime: { batchWorker: false } });
    client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
  });
  after(async () => {
    await server.close();
  });

  test('an upload over uploadLimitBytes is 413 and nothing is kept; one at the limit is accepted', async () => {
    await assert.rejects(
      client.files.create({ file: await toFile(Buffer.alloc(5000, 97), 'big.jsonl'), purpose: 'batch' }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.status, 413);
        assert.equal(error.code, 'file_too_large');
        return true;
      },
    );
    const chunked = await chunkedUpload(server, ['x'.repeat(700), 'y'.repeat(700)]);
    assert.equal(chunked.status, 413);
    assert.deepEqual((await client.files.list()).data, []);
    assert.deepEqual(readdirSync(join(server.dataDir, 'files')), []);
    const atLimit = await client.files.create({ file: await toFile(Buffer.alloc(1024, 97), 'exact.jsonl'), purpose: 'batch' });
    assert.equal(atLimit.bytes, 1024);
  });
});
