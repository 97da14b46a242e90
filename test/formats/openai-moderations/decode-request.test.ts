import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_MODERATION_INPUTS, decodeModerationRequest } from '../../../src/formats/openai-moderations/decode-request.ts';

describe('decodeModerationRequest', () => {
  test('a string, an array of strings, and text parts', () => {
    assert.deepEqual(decodeModerationRequest({ input: 'hi' }), { model: null, inputs: ['hi'] });
    assert.deepEqual(decodeModerationRequest({ input: ['a', 'b'], model: 'mod' }), { model: 'mod', inputs: ['a', 'b'] });
    assert.deepEqual(decodeModerationRequest({ input: [{ type: 'text', text: 'x' }, 'y'] }), { model: null, inputs: ['x', 'y'] });
  });

  test('empty strings are accepted (never flagged), an empty array is not', () => {
    assert.deepEqual(decodeModerationRequest({ input: '' }).inputs, ['']);
    assert.throws(() => decodeModerationRequest({ input: [] }), { status: 400, code: 'invalid_parameter', param: 'input' });
  });

  test('refusals name the field', () => {
    assert.throws(() => decodeModerationRequest(null), { status: 400, code: 'invalid_format', param: null });
    assert.throws(() => decodeModerationRequest({}), { code: 'missing_parameter', param: 'input' });
    assert.throws(() => decodeModerationRequest({ input: 5 }), { code: 'invalid_format', param: 'input' });
    assert.throws(() => decodeModerationRequest({ input: ['ok', 5] }), { code: 'invalid_format', param: 'input[1]' });
    assert.throws(() => decodeModerationRequest({ input: [{ type: 'text', text: 1 }] }), {
      code: 'invalid_format',
      param: 'input[0].text',
    });
    assert.throws(() => decodeModerationRequest({ input: ['a', { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }), {
      code: 'invalid_parameter',
      param: 'input[1]',
    });
    assert.throws(() => decodeModerationRequest({ input: [{ type: 'audio' }] }), { code: 'invalid_parameter', param: 'input[0].type' });
    assert.throws(() => decodeModerationRequest({ input: 'x', model: 7 }), { code: 'invalid_format', param: 'model' });
    assert.throws(() => decodeModerationRequest({ input: 'x', model: '' }), { code: 'invalid_parameter', param: 'model' });
    assert.throws(() => decodeModerationRequest({ input: Array.from({ length: MAX_MODERATION_INPUTS + 1 }, () => 'x') }), {
      code: 'invalid_parameter',
      param: 'input',
    });
  });
});
