import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEmbeddingBase64, encodeEmbeddingsResponse } from '../../../src/formats/openai-embeddings/encode-response.ts';

function decodeBase64(encoded: string): number[] {
  const bytes = Buffer.from(encoded, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4));
}

describe('encodeEmbeddingsResponse', () => {
  const embeddings = [
    [0.1, -0.25, 0.3333333333],
    [1, 0, -1],
  ];

  test('float: the SPEC list shape, one item per input with its index, usage totals', () => {
    const body = encodeEmbeddingsResponse({ model: 'emb', embeddings, encodingFormat: 'float', promptTokens: 7 });
    assert.equal(body.object, 'list');
    assert.equal(body.model, 'emb');
    assert.deepEqual(body.usage, { prompt_tokens: 7, total_tokens: 7 });
    assert.deepEqual(
      body.data.map((item) => [item.object, item.index]),
      [
        ['embedding', 0],
        ['embedding', 1],
      ],
    );
    assert.deepEqual(body.data[1]!.embedding, [1, 0, -1]);
    // Rounded through float32.
    assert.equal((body.data[0]!.embedding as number[])[2], Math.fround(0.3333333333));
  });

  test('base64 is little-endian float32 and decodes to exactly the float output', () => {
    const asFloat = encodeEmbeddingsResponse({ model: 'emb', embeddings, encodingFormat: 'float', promptTokens: 1 });
    const asBase64 = encodeEmbeddingsResponse({ model: 'emb', embeddings, encodingFormat: 'base64', promptTokens: 1 });
    for (let index = 0; index < embeddings.length; index++) {
      const encoded = asBase64.data[index]!.embedding;
      assert.equal(typeof encoded, 'string');
      assert.deepEqual(decodeBase64(encoded as string), asFloat.data[index]!.embedding);
    }
  });

  test('encodeEmbeddingBase64 writes the documented bytes', () => {
    // 1.0f is 0x3f800000: little-endian bytes 00 00 80 3f.
    assert.equal(encodeEmbeddingBase64([1]), Buffer.from([0x00, 0x00, 0x80, 0x3f]).toString('base64'));
    assert.equal(encodeEmbeddingBase64([]), '');
  });
});
