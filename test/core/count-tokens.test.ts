import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import {
  ASYNC_SLICE_LENGTH,
  countRequestTokens,
  countRequestTokensAsync,
  countShortRequestTokens,
  countTextTokens,
  countTextTokensAsync,
  MAX_RUN_LENGTH,
} from '../../src/core/count-tokens.ts';
import type { GenerationRequest } from '../../src/core/generation.ts';

const PROSE =
  'Switchyard sits between paying clients and upstreams it does not control. It is judged by its bad days:\n\n' +
  '  a fault-injecting upstream, hostile clients and kill -9. Numbers like 1234567 and café, naïve, 日本語のテキスト, emoji 🎉🎉.\n';

/** A pseudo-random single "word" of lower-case letters (no whitespace), deterministic. */
function longWord(length: number): string {
  let word = '';
  let state = 7;
  for (let index = 0; index < length; index++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    word += String.fromCharCode(97 + (state % 26));
  }
  return word;
}

describe('countTextTokens', () => {
  test('ordinary text is counted exactly as the tokenizer counts it', () => {
    for (const text of [PROSE, PROSE.repeat(50), 'Hello', ' ', '\n\n\n']) assert.equal(countTextTokens(text), countTokens(text));
    assert.equal(countTextTokens(''), 0);
  });

  test('a word longer than a run is counted in pieces, close to the exact count', () => {
    const word = longWord(4000);
    const exact = countTokens(word);
    const pieces = countTextTokens(word);
    assert.ok(Math.abs(pieces - exact) <= Math.ceil(word.length / MAX_RUN_LENGTH), `${pieces} vs exact ${exact}`);
  });

  test('long runs of whitespace are counted in pieces too', () => {
    const spaces = ' '.repeat(5000);
    const count = countTextTokens(spaces);
    assert.ok(count > 0 && count <= Math.ceil(spaces.length / MAX_RUN_LENGTH) * 4, String(count));
  });

  test('surrogate pairs are never split between pieces', () => {
    const emoji = '🎉'.repeat(1000); // one run of 2000 UTF-16 units
    assert.ok(countTextTokens(emoji) >= 1000 / 4);
    assert.equal(countTextTokens(emoji), countTextTokens(emoji)); // deterministic, and no lone surrogates thrown
  });
});

describe('countTextTokensAsync', () => {
  test('short texts give the synchronous count', async () => {
    assert.equal(await countTextTokensAsync(PROSE), countTextTokens(PROSE));
  });

  test('a 1 MB single word is counted in slices, yielding to the event loop between them', async () => {
    const word = 'x'.repeat(1024 * 1024);
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const tokens = await countTextTokensAsync(word);
    counting = false;
    assert.equal(tokens, countTextTokens(word));
    // Other callbacks ran while counting: at least one event-loop turn per slice.
    assert.ok(turns >= Math.floor(word.length / ASYNC_SLICE_LENGTH) - 1, `only ${turns} event-loop turns`);
  });

  test('prose counted in slices stays within a token per slice of the exact count', async () => {
    const text = PROSE.repeat(2000);
    const exact = countTokens(text);
    const sliced = await countTextTokensAsync(text);
    assert.ok(Math.abs(sliced - exact) <= Math.ceil(text.length / ASYNC_SLICE_LENGTH), `${sliced} vs ${exact}`);
  });

  test('countRequestTokensAsync agrees with countRequestTokens', async () => {
    const request: GenerationRequest = {
      model: 'm',
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: PROSE },
            { type: 'image', url: 'https://example.com/a.png' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool-call', id: 'call_1', name: 'lookup', input: '{"q":"x"}' }] },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'call_1',
              content: [
                { type: 'text', text: 'found' },
                { type: 'image', url: 'https://example.com/b.png' },
              ],
            },
          ],
        },
      ],
      tools: [{ name: 'lookup', description: 'Looks up', inputSchema: { type: 'object' } }],
    };
    assert.equal(await countRequestTokensAsync(request), countRequestTokens(request));
    // Short enough to count at once: the same figure, without a promise.
    assert.equal(countShortRequestTokens(request), countRequestTokens(request));
  });

  test('countShortRequestTokens leaves a prompt longer than one slice, in all its texts, to the async count', () => {
    const half = 'word '.repeat(Math.ceil(ASYNC_SLICE_LENGTH / 10) + 1);
    const request: GenerationRequest = {
      model: 'm',
      system: half,
      messages: [{ role: 'user', content: [{ type: 'text', text: half }] }],
    };
    assert.ok(half.length <= ASYNC_SLICE_LENGTH && half.length * 2 > ASYNC_SLICE_LENGTH);
    assert.equal(countShortRequestTokens(request), undefined);
    assert.equal(countShortRequestTokens({ ...request, system: 'Be brief.' }), countRequestTokens({ ...request, system: 'Be brief.' }));
  });
});
