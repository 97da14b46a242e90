/**
 * The wire shapes of the request-limited endpoints (formats/openai-files, openai-batches, openai-models,
 * openai-responses/stored-response-queries.ts): their queries decode as the routes read them before,
 * with the same SPEC errors, and their objects encode as before.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeBatchListQuery } from '../../src/formats/openai-batches/decode-request.ts';
import { checkUploadIsMultipart, decodeFileListQuery, decodeSignedLinkQuery } from '../../src/formats/openai-files/decode-request.ts';
import { encodeDeletedFile, encodeFileList } from '../../src/formats/openai-files/file-object.ts';
import { decodeModelId, encodeModelList } from '../../src/formats/openai-models/model-object.ts';
import { checkRetrieveQuery } from '../../src/formats/openai-responses/stored-response-queries.ts';

const file = { id: 'file-1', bytes: 3, createdAt: 1_700_000_000_999, filename: 'a.jsonl', purpose: 'batch', expiresAt: null };

describe('files wire', () => {
  test('the list query: defaults, empty values as absent, the SPEC 400s', () => {
    assert.deepEqual(decodeFileListQuery({}), { limit: 10_000, order: 'desc' });
    assert.deepEqual(decodeFileListQuery({ limit: '5', order: 'asc', after: 'file-0', purpose: 'batch' }), {
      limit: 5,
      order: 'asc',
      after: 'file-0',
      purpose: 'batch',
    });
    assert.deepEqual(decodeFileListQuery({ limit: '', after: '', purpose: '' }), { limit: 10_000, order: 'desc' });
    assert.throws(() => decodeFileListQuery({ order: 'newest' }), { status: 400, code: 'invalid_parameter', param: 'order' });
    for (const limit of ['0', '10001', '1.5', 'ten', '-1'])
      assert.throws(() => decodeFileListQuery({ limit }), { status: 400, code: 'invalid_parameter', param: 'limit' });
  });

  test('an upload that is not multipart is a 400 invalid_format; a signed link query is passed on as sent', () => {
    assert.throws(() => checkUploadIsMultipart(false), { status: 400, code: 'invalid_format' });
    checkUploadIsMultipart(true);
    assert.deepEqual(decodeSignedLinkQuery({ expires: '1', signature: 'abc' }), { expires: '1', signature: 'abc' });
    assert.deepEqual(decodeSignedLinkQuery(undefined), { expires: undefined, signature: undefined });
  });

  test('the list page and the delete answer', () => {
    assert.deepEqual(encodeFileList([file], true), {
      object: 'list',
      data: [
        {
          id: 'file-1',
          object: 'file',
          bytes: 3,
          created_at: 1_700_000_000,
          filename: 'a.jsonl',
          purpose: 'batch',
          status: 'uploaded',
          status_details: null,
          expires_at: null,
        },
      ],
      first_id: 'file-1',
      last_id: 'file-1',
      has_more: true,
    });
    assert.deepEqual(encodeFileList([], false), { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    assert.deepEqual(encodeDeletedFile(file), { id: 'file-1', object: 'file', deleted: true });
  });
});

describe('batches wire', () => {
  test('the list query: limit 1-100 default 20, status as sent', () => {
    assert.deepEqual(decodeBatchListQuery({}), { limit: 20 });
    assert.deepEqual(decodeBatchListQuery({ limit: '100', after: 'batch-1', status: 'completed' }), {
      limit: 100,
      after: 'batch-1',
      status: 'completed',
    });
    assert.throws(() => decodeBatchListQuery({ limit: '101' }), { status: 400, code: 'invalid_parameter', param: 'limit' });
  });
});

describe('models wire', () => {
  test('the model id of the path, percent-decoded when it can be', () => {
    assert.equal(decodeModelId('org%2Fmodel'), 'org/model');
    assert.equal(decodeModelId('org/model'), 'org/model');
    assert.equal(decodeModelId('bad%E0%A4%A'), 'bad%E0%A4%A');
  });

  test('list entries carry the legacy permission, root and parent', () => {
    const list = encodeModelList([{ id: 'm', created: 1, ownedBy: 'op', description: 'd', capabilities: ['chat'], pricing: { x: 1 } }]);
    assert.deepEqual(list, {
      object: 'list',
      data: [
        {
          id: 'm',
          object: 'model',
          created: 1,
          owned_by: 'op',
          description: 'd',
          capabilities: ['chat'],
          pricing: { x: 1 },
          permission: [],
          root: 'm',
          parent: null,
        },
      ],
    });
  });
});

describe('stored responses wire', () => {
  test('retrieve refuses stream=true with a 400 naming stream', () => {
    checkRetrieveQuery({});
    checkRetrieveQuery({ stream: 'false' });
    assert.throws(() => checkRetrieveQuery({ stream: 'true' }), { status: 400, code: 'invalid_parameter', param: 'stream' });
  });
});
