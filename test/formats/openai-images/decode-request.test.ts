import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeImageGenerationRequest, resolveImageSize } from '../../../src/formats/openai-images/decode-request.ts';

describe('decodeImageGenerationRequest', () => {
  test('defaults: n 1, size unset, url, nothing ignored', () => {
    assert.deepEqual(decodeImageGenerationRequest({ prompt: 'a red fox' }), {
      model: null,
      prompt: 'a red fox',
      n: 1,
      size: null,
      responseFormat: 'url',
      ignoredParameters: [],
    });
  });

  test('every field is read; auto size means unset; quality is decoded (the backend decides whether it honours it); other styling options are listed as ignored', () => {
    assert.deepEqual(
      decodeImageGenerationRequest({
        prompt: 'p',
        model: 'img',
        n: 10,
        size: '512x512',
        response_format: 'b64_json',
        user: 'u',
        quality: 'hd',
        style: 'vivid',
        stream: false,
      }),
      {
        model: 'img',
        prompt: 'p',
        n: 10,
        size: '512x512',
        responseFormat: 'b64_json',
        quality: 'hd',
        user: 'u',
        ignoredParameters: ['style'],
      },
    );
    assert.equal(decodeImageGenerationRequest({ prompt: 'p', size: 'auto' }).size, null);
  });

  test('refusals name the field', () => {
    assert.throws(() => decodeImageGenerationRequest('x'), { status: 400, code: 'invalid_format', param: null });
    assert.throws(() => decodeImageGenerationRequest({}), { code: 'missing_parameter', param: 'prompt' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: '   ' }), { code: 'invalid_parameter', param: 'prompt' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 3 }), { code: 'invalid_format', param: 'prompt' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'x'.repeat(4001) }), { code: 'invalid_parameter', param: 'prompt' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'x'.repeat(11) }, { maxPromptCharacters: 10 }), { param: 'prompt' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', n: 0 }), { code: 'invalid_parameter', param: 'n' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', n: 11 }), { code: 'invalid_parameter', param: 'n' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', n: 1.5 }), { code: 'invalid_parameter', param: 'n' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', n: '2' }), { code: 'invalid_format', param: 'n' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', size: 'large' }), { code: 'invalid_parameter', param: 'size' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', size: 512 }), { code: 'invalid_format', param: 'size' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', response_format: 'png' }), {
      code: 'invalid_parameter',
      param: 'response_format',
    });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', stream: true }), { code: 'invalid_parameter', param: 'stream' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', model: '' }), { code: 'invalid_parameter', param: 'model' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', quality: 'ultra' }), { code: 'invalid_parameter', param: 'quality' });
    assert.throws(() => decodeImageGenerationRequest({ prompt: 'p', quality: 2 }), { code: 'invalid_format', param: 'quality' });
  });
});

describe('resolveImageSize', () => {
  const allowed = ['256x256', '512x512', '1024x1024'];

  test('an allowed size is kept; an unknown one is a 400 listing the allowed sizes', () => {
    assert.equal(resolveImageSize('512x512', allowed), '512x512');
    assert.throws(
      () => resolveImageSize('640x480', allowed),
      (error: Error & { param?: string; status?: number }) => {
        assert.equal(error.status, 400);
        assert.equal(error.param, 'size');
        assert.match(error.message, /256x256, 512x512, 1024x1024/);
        return true;
      },
    );
  });

  test('no size: 1024x1024 when allowed, else the first allowed size, any size when no list', () => {
    assert.equal(resolveImageSize(null, allowed), '1024x1024');
    assert.equal(resolveImageSize(null, ['256x256', '512x512']), '256x256');
    assert.equal(resolveImageSize(null, []), '1024x1024');
    assert.equal(resolveImageSize('640x480', []), '640x480');
  });
});
