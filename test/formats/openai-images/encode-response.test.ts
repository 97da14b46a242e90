import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeImagesResponse } from '../../../src/formats/openai-images/encode-response.ts';

describe('encodeImagesResponse', () => {
  test('b64_json and url items, revised_prompt only when given', () => {
    const body = encodeImagesResponse({
      created: 1_700_000_000,
      images: [
        { b64Json: 'AAAA' },
        { url: 'https://switchyard.example/v1/files/file-x/content?sig=1', revisedPrompt: 'a fox, watercolour' },
      ],
    });
    assert.deepEqual(body, {
      created: 1_700_000_000,
      data: [
        { b64_json: 'AAAA' },
        { url: 'https://switchyard.example/v1/files/file-x/content?sig=1', revised_prompt: 'a fox, watercolour' },
      ],
    });
  });

  test('created defaults to now, in seconds', () => {
    const before = Math.floor(Date.now() / 1000);
    const body = encodeImagesResponse({ images: [] });
    assert.ok(body.created >= before && body.created <= Math.floor(Date.now() / 1000));
  });
});
