import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeCountTokensResponse } from '../../../src/formats/anthropic-messages/count-tokens.ts';
import { decodeCountTokensRequest } from '../../../src/formats/anthropic-messages/decode-request.ts';
import { countRequestTokens } from '../../../src/core/count-tokens.ts';

describe('count_tokens', () => {
  test('answers {input_tokens} with the core count of the decoded request', () => {
    const request = decodeCountTokensRequest({ model: 'm', messages: [{ role: 'user', content: 'Hello, world' }] });
    const answer = encodeCountTokensResponse(request);
    assert.deepEqual(Object.keys(answer), ['input_tokens']);
    assert.equal(answer.input_tokens, countRequestTokens(request));
    assert.ok(answer.input_tokens > 0);
  });

  test('system text and tools add to the count', () => {
    const plain = encodeCountTokensResponse(decodeCountTokensRequest({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] }));
    const rich = encodeCountTokensResponse(
      decodeCountTokensRequest({
        model: 'm',
        system: 'You are a weather assistant who answers in one sentence.',
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [
          {
            name: 'get_weather',
            description: 'Weather for a city.',
            input_schema: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
      }),
    );
    assert.ok(rich.input_tokens > plain.input_tokens + 10);
  });
});
