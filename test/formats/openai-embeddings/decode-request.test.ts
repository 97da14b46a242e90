import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../../src/core/service-error.ts';
import {
  MAX_EMBEDDING_INPUTS,
  checkEmbeddingInputTokens,
  decodeEmbeddingsRequest,
} from '../../../src/formats/openai-embeddings/decode-request.ts';

function assertRefused(body: unknown, param: string | null, code: string): void {
  assert.throws(
    () => decodeEmbeddingsRequest(body),
    (error: unknown) => {
      assert.ok(error instanceof ServiceError);
      assert.equal(error.status, 400);
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.param, param);
      assert.equal(error.code, code);
      return true;
    },
  );
}

describe('decodeEmbeddingsRequest', () => {
  test('a single string becomes one input; defaults: float, no model, no dimensions', () => {
    assert.deepEqual(decodeEmbeddingsRequest({ input: 'hello' }), {
      model: null,
      inputs: ['hello'],
      inputIsArray: false,
      encodingFormat: 'float',
    });
  });

  test('an array of strings keeps its order; model, base64, dimensions and user are read', () => {
    assert.deepEqual(
      decodeEmbeddingsRequest({ model: 'm', input: ['a', 'b', 'c'], encoding_format: 'base64', dimensions: 256, user: 'u-1' }),
      { model: 'm', inputs: ['a', 'b', 'c'], inputIsArray: true, encodingFormat: 'base64', dimensions: 256, user: 'u-1' },
    );
  });

  test('null optional fields count as absent; unknown fields are ignored', () => {
    const decoded = decodeEmbeddingsRequest({ input: 'x', model: null, encoding_format: null, dimensions: null, extra: 1 });
    assert.equal(decoded.model, null);
    assert.equal(decoded.encodingFormat, 'float');
    assert.equal(decoded.dimensions, undefined);
  });

  test('the body must be an object', () => {
    assertRefused([], null, 'invalid_format');
    assertRefused('text', null, 'invalid_format');
  });

  test('missing, empty and mistyped input are refused with param input', () => {
    assertRefused({}, 'input', 'missing_parameter');
    assertRefused({ input: null }, 'input', 'missing_parameter');
    assertRefused({ input: '' }, 'input', 'invalid_parameter');
    assertRefused({ input: [] }, 'input', 'invalid_parameter');
    assertRefused({ input: 42 }, 'input', 'invalid_format');
    assertRefused({ input: { text: 'x' } }, 'input', 'invalid_format');
  });

  test('a bad item is named by its index', () => {
    assertRefused({ input: ['a', 'b', 'c', ''] }, 'input[3]', 'invalid_parameter');
    assertRefused({ input: ['a', { text: 'b' }] }, 'input[1]', 'invalid_format');
    assertRefused({ input: ['a', 'b', 7] }, 'input[2]', 'invalid_parameter');
  });

  test('token arrays are refused', () => {
    assertRefused({ input: [1, 2, 3] }, 'input', 'invalid_parameter');
    assertRefused({ input: [[1, 2], [3]] }, 'input', 'invalid_parameter');
  });

  test('more than 2048 inputs are refused; exactly 2048 pass', () => {
    assert.equal(decodeEmbeddingsRequest({ input: Array.from({ length: MAX_EMBEDDING_INPUTS }, () => 'x') }).inputs.length, 2048);
    assertRefused({ input: Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => 'x') }, 'input', 'invalid_parameter');
  });

  test('encoding_format, dimensions and model are checked', () => {
    assertRefused({ input: 'x', encoding_format: 'binary' }, 'encoding_format', 'invalid_parameter');
    assertRefused({ input: 'x', encoding_format: 1 }, 'encoding_format', 'invalid_format');
    assertRefused({ input: 'x', dimensions: 0 }, 'dimensions', 'invalid_parameter');
    assertRefused({ input: 'x', dimensions: 1.5 }, 'dimensions', 'invalid_parameter');
    assertRefused({ input: 'x', dimensions: '8' }, 'dimensions', 'invalid_format');
    assertRefused({ input: 'x', model: '' }, 'model', 'invalid_parameter');
    assertRefused({ input: 'x', model: 3 }, 'model', 'invalid_format');
    assertRefused({ input: 'x', user: 3 }, 'user', 'invalid_format');
  });
});

describe('checkEmbeddingInputTokens', () => {
  test('returns the token count of each input', () => {
    const counts = checkEmbeddingInputTokens(decodeEmbeddingsRequest({ input: ['hello world', 'one two three four'] }), 100);
    assert.equal(counts.length, 2);
    assert.ok(counts[0]! >= 2 && counts[1]! >= 4);
  });

  test('an input over the limit is refused as input[i] in an array and as input alone', () => {
    const long = 'word '.repeat(50);
    assert.throws(() => checkEmbeddingInputTokens(decodeEmbeddingsRequest({ input: ['ok', 'fine', 'sure', long] }), 20), {
      status: 400,
      code: 'invalid_parameter',
      param: 'input[3]',
    });
    assert.throws(() => checkEmbeddingInputTokens(decodeEmbeddingsRequest({ input: [long] }), 20), { param: 'input[0]' });
    assert.throws(() => checkEmbeddingInputTokens(decodeEmbeddingsRequest({ input: long }), 20), { param: 'input' });
  });
});
