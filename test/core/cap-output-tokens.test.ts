import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batched } from '../../src/core/batched.ts';
import { capOutputTokens } from '../../src/core/cap-output-tokens.ts';
import { countTextTokens, MAX_RUN_LENGTH } from '../../src/core/count-tokens.ts';
import type { StreamPart } from '../../src/core/stream-parts.ts';
import { emptyUsage, type Usage } from '../../src/core/usage.ts';

const usage = (outputTokens: number): Usage => ({ ...emptyUsage(), inputTokens: 7, outputTokens });
const finish = (outputTokens: number): StreamPart => ({
  type: 'finish',
  finishReason: 'stop',
  stopSequence: null,
  usage: usage(outputTokens),
});

/** A source that records how far it was read and whether it was closed. */
class RecordingSource implements AsyncIterable<StreamPart> {
  pulled = 0;
  closed = false;
  constructor(private readonly parts: Iterable<StreamPart>) {}
  async *[Symbol.asyncIterator](): AsyncGenerator<StreamPart, void, undefined> {
    try {
      for (const part of this.parts) {
        this.pulled++;
        yield part;
      }
    } finally {
      this.closed = true;
    }
  }
}

function textParts(deltas: string[], id = 'text-0'): StreamPart[] {
  return [{ type: 'text-start', id }, ...deltas.map((delta): StreamPart => ({ type: 'text-delta', id, delta })), { type: 'text-end', id }];
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const collected: StreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

function joined(parts: StreamPart[], type: 'text-delta' | 'reasoning-delta' | 'tool-input-delta'): string {
  return parts.map((part) => (part.type === type ? part.delta : '')).join('');
}

function lastFinish(parts: StreamPart[]): Extract<StreamPart, { type: 'finish' }> {
  const last = parts.at(-1);
  assert.equal(last?.type, 'finish');
  return last as Extract<StreamPart, { type: 'finish' }>;
}

/** Checks that every started block is ended exactly once, before the finish. */
function assertBlocksBalanced(parts: StreamPart[]): void {
  const open = new Set<string>();
  for (const part of parts) {
    if (part.type === 'text-start' || part.type === 'reasoning-start' || part.type === 'tool-input-start') open.add(part.id);
    if (part.type === 'text-end' || part.type === 'reasoning-end' || part.type === 'tool-input-end')
      assert.ok(open.delete(part.id), `ended twice: ${part.id}`);
    if (part.type === 'finish') assert.equal(open.size, 0, `open at finish: ${[...open].join(', ')}`);
  }
}

const PROSE = 'The quick brown fox jumps over the lazy dog, then runs far into the forest and never comes back again. ';

describe('capOutputTokens', () => {
  test('without a cap, parts pass through untouched', async () => {
    const parts = [...textParts(['Hello', ' world']), finish(2)];
    assert.deepEqual(await collect(capOutputTokens(new RecordingSource(parts), undefined)), parts);
  });

  test('output within the cap passes through, with its own finish', async () => {
    const parts = [{ type: 'response-metadata', upstreamId: 'x' } as StreamPart, ...textParts(['Hello', ' world']), finish(2)];
    assert.deepEqual(await collect(capOutputTokens(new RecordingSource(parts), 10)), parts);
  });

  test('reported usage above the cap is held to it', async () => {
    const parts = [...textParts(['Hello']), finish(50)];
    const result = lastFinish(await collect(capOutputTokens(new RecordingSource(parts), 10)));
    assert.equal(result.usage.outputTokens, 10);
    assert.equal(result.finishReason, 'stop');
  });

  test('output beyond the cap is cut at a token boundary, ends its block and finishes with length', async () => {
    // "hello world" is two tokens; " peace" would be the third.
    const source = new RecordingSource([...textParts(['hello', ' world peace and more', ' never read']), finish(99)]);
    const parts = await collect(capOutputTokens(source, 2));
    assert.equal(joined(parts, 'text-delta'), 'hello world');
    assert.deepEqual(parts.slice(-2, -1), [{ type: 'text-end', id: 'text-0' }]);
    const result = lastFinish(parts);
    assert.equal(result.finishReason, 'length');
    assert.equal(result.usage.outputTokens, 2);
    assert.equal(result.usage.estimated, true);
    assertBlocksBalanced(parts);
    // The upstream was closed right after the delta that passed the cap.
    assert.equal(source.closed, true);
    assert.equal(source.pulled, 3);
  });

  test('a long answer streamed in small deltas stops at exactly the cap (or a token short)', async () => {
    const text = PROSE.repeat(40);
    const deltas = text.match(/.{1,3}/gs) ?? [];
    for (const cap of [1, 7, 100, 333]) {
      const parts = await collect(capOutputTokens(new RecordingSource([...textParts(deltas), finish(9999)]), cap));
      const output = joined(parts, 'text-delta');
      assert.ok(text.startsWith(output));
      const counted = countTextTokens(output);
      assert.ok(counted <= cap && counted >= cap - 1, `cap ${cap}: ${counted} tokens`);
      assert.ok(lastFinish(parts).usage.outputTokens <= cap);
      assertBlocksBalanced(parts);
    }
  });

  test('the running count stays close to counting the whole output at once', async () => {
    const text = `${PROSE}${'x'.repeat(700)} tail ${PROSE}`.repeat(5);
    const deltas = text.match(/.{1,5}/gs) ?? [];
    const exact = countTextTokens(text);
    // A cap just under the exact count must cut only the last few tokens.
    const parts = await collect(capOutputTokens(new RecordingSource([...textParts(deltas), finish(exact)]), exact - 3));
    const output = joined(parts, 'text-delta');
    assert.ok(output.length >= text.length - 40, `kept ${output.length} of ${text.length} characters`);
    assert.equal(lastFinish(parts).finishReason, 'length');
  });

  test('reasoning counts toward the cap and its block is ended', async () => {
    const parts = await collect(
      capOutputTokens(
        new RecordingSource([
          { type: 'reasoning-start', id: 'reasoning-0' },
          { type: 'reasoning-delta', id: 'reasoning-0', delta: PROSE.repeat(5) },
          { type: 'reasoning-end', id: 'reasoning-0' },
          ...textParts(['never']),
          finish(500),
        ]),
        10,
      ),
    );
    assert.equal(countTextTokens(joined(parts, 'reasoning-delta')), 10);
    assert.equal(joined(parts, 'text-delta'), '');
    assert.ok(!parts.some((part) => part.type === 'text-start'));
    const result = lastFinish(parts);
    assert.equal(result.usage.reasoningTokens, 10);
    assert.equal(result.usage.outputTokens, 10);
    assertBlocksBalanced(parts);
  });

  test('tool arguments are cut and the call ended; a call whose name does not fit is left out', async () => {
    const call = (id: string, name: string, args: string): StreamPart[] => [
      { type: 'tool-input-start', id, toolName: name },
      { type: 'tool-input-delta', id, delta: args },
      { type: 'tool-input-end', id },
    ];
    const args = JSON.stringify({ query: PROSE.repeat(3) });
    const parts = await collect(
      capOutputTokens(new RecordingSource([...call('call_1', 'lookup', args), ...call('call_2', 'second', '{}'), finish(300)]), 12),
    );
    const cut = joined(parts, 'tool-input-delta');
    assert.ok(args.startsWith(cut) && cut.length > 0 && cut.length < args.length);
    assert.equal(countTextTokens('lookup') + countTextTokens(cut) <= 12, true);
    assert.ok(!parts.some((part) => part.type === 'tool-input-start' && part.id === 'call_2'));
    assertBlocksBalanced(parts);
    assert.equal(lastFinish(parts).finishReason, 'length');

    const nameTooLong = await collect(
      capOutputTokens(new RecordingSource([...textParts(['Hi']), ...call('call_3', 'a_rather_long_tool_name', '{}'), finish(9)]), 2),
    );
    assert.ok(!nameTooLong.some((part) => part.type === 'tool-input-start'));
    assertBlocksBalanced(nameTooLong);
  });

  test('interleaved blocks are all ended when the cap cuts', async () => {
    const parts = await collect(
      capOutputTokens(
        new RecordingSource([
          { type: 'tool-input-start', id: 'call_a', toolName: 'a' },
          { type: 'tool-input-start', id: 'call_b', toolName: 'b' },
          { type: 'tool-input-delta', id: 'call_a', delta: '{"x":' },
          { type: 'tool-input-delta', id: 'call_b', delta: '{"y": "a long value that will not fit at all"}' },
          finish(100),
        ]),
        6,
      ),
    );
    assertBlocksBalanced(parts);
    assert.deepEqual(
      parts.filter((part) => part.type === 'tool-input-end').map((part) => part.id),
      ['call_a', 'call_b'],
    );
  });

  test('a stream that never ends is cut and its source closed', async () => {
    let closed = false;
    async function* endless(): AsyncGenerator<StreamPart, void, undefined> {
      try {
        yield { type: 'text-start', id: 't' };
        for (;;) yield { type: 'text-delta', id: 't', delta: ' word' };
      } finally {
        closed = true;
      }
    }
    const parts = await collect(capOutputTokens(endless(), 1000));
    assert.equal(lastFinish(parts).usage.outputTokens, 1000);
    assert.equal(countTextTokens(joined(parts, 'text-delta')), 1000);
    assert.equal(closed, true);
  });

  test('the source is closed before the final parts reach a consumer that stops reading', async () => {
    const source = new RecordingSource([...textParts(['one two three four five six']), finish(6)]);
    const iterator = capOutputTokens(source, 2)[Symbol.asyncIterator]();
    for (;;) {
      const next = await iterator.next();
      if (next.value?.type === 'text-delta') break;
    }
    assert.equal(source.closed, true);
  });

  test('a source that yields its finish or an error is closed, so its cleanup runs (a llama.cpp sequence, a connection)', async () => {
    // Cheap phase (far inside the cap), counting phase (near the cap), and an error part.
    const error = { type: 'error', error: new Error('boom') } as unknown as StreamPart;
    for (const [parts, cap] of [
      [[...textParts(['Hi']), finish(1)], 100],
      [[...textParts(['Hello there', ' world']), finish(3)], 5],
      [[...textParts(['Hi']).slice(0, 2), error], 100],
    ] as const) {
      const source = new RecordingSource(parts);
      await collect(capOutputTokens(source, cap));
      assert.equal(source.closed, true);
    }
  });

  test('a consumer that leaves early closes the source', async () => {
    const source = new RecordingSource([...textParts(['a', 'b', 'c']), finish(3)]);
    for await (const part of capOutputTokens(source, 100)) if (part.type === 'text-delta') break;
    assert.equal(source.closed, true);
  });

  test('errors pass through and end the stream', async () => {
    const error = { type: 'error', error: new Error('boom') } as unknown as StreamPart;
    const parts = await collect(capOutputTokens(new RecordingSource([...textParts(['Hi']).slice(0, 2), error, finish(1)]), 100));
    assert.equal(parts.at(-1), error);
  });

  test('surrogate pairs are never split by the cut', async () => {
    const parts = await collect(capOutputTokens(new RecordingSource([...textParts(['🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉']), finish(20)]), 3));
    const output = joined(parts, 'text-delta');
    assert.ok(!/[\uD800-\uDBFF]$/.test(output));
    assert.ok(countTextTokens(output) <= 3);
  });

  test('the prompt figure is reported when given', async () => {
    const parts = await collect(
      capOutputTokens(new RecordingSource([...textParts([PROSE]), finish(20)]), 3, countTextTokens, { inputTokens: 42 }),
    );
    assert.equal(lastFinish(parts).usage.inputTokens, 42);
  });

  test('counting is lazy: nothing is counted while the output bytes fit the cap, and near it the count is exact', async () => {
    let calls = 0;
    const counter = (text: string): number => {
      calls++;
      return countTextTokens(text);
    };
    const deltas = PROSE.split(/(?<= )/);
    const bytes = Buffer.byteLength(deltas.join(''));
    // Well inside the cap (every byte could be a token and it would still fit): no tokenizer call.
    const inside = await collect(capOutputTokens(new RecordingSource([...textParts(deltas), finish(3)]), bytes, counter));
    assert.equal(calls, 0);
    assert.equal(lastFinish(inside).finishReason, 'stop');
    // A cap below the output's bytes but above its tokens: counted once the bound gets there, and not cut.
    const tokens = countTextTokens(deltas.join(''));
    calls = 0;
    const near = await collect(capOutputTokens(new RecordingSource([...textParts(deltas), finish(3)]), tokens, counter));
    assert.ok(calls > 0);
    assert.equal(lastFinish(near).finishReason, 'stop');
    assert.equal(near.filter((part) => part.type === 'text-delta').length, deltas.length);
  });

  test('counting work is linear in the output: each character is counted a bounded number of times', async () => {
    let countedCharacters = 0;
    const counter = (text: string): number => {
      countedCharacters += text.length;
      return countTextTokens(text);
    };
    const oneWord = 'y'.repeat(20_000).match(/.{1,2}/gs) ?? [];
    const prose = PROSE.repeat(200).match(/.{1,2}/gs) ?? [];
    for (const deltas of [oneWord, prose]) {
      countedCharacters = 0;
      const total = deltas.join('').length;
      await collect(capOutputTokens(new RecordingSource([...textParts(deltas), finish(1)]), 1_000_000, counter));
      assert.ok(countedCharacters <= total * (MAX_RUN_LENGTH + 64) * 2, `${countedCharacters} characters counted for ${total}`);
      assert.ok(countedCharacters <= total * 800, `${countedCharacters} for ${total}`);
    }
  });

  test('a batch that ends in a finish reported within the cap passes as it is, with no token counted', async () => {
    let counted = 0;
    const counter = (text: string): number => {
      counted++;
      return countTextTokens(text);
    };
    const answer = [...textParts(['Hello there, ', 'a much longer answer than eight bytes']), finish(8)];
    const oneRead = batched(async function* () {
      yield answer;
    });
    assert.deepEqual(await collect(capOutputTokens(oneRead, 8, counter)), answer);
    assert.equal(counted, 0);
  });

  test('the same answer with estimated usage, or with the finish in a later read, is counted and cut at the cap', async () => {
    const answer = textParts(['Hello there, ', 'a much longer answer than eight tokens, certainly many more than that']);
    const estimated: StreamPart = { type: 'finish', finishReason: 'stop', stopSequence: null, usage: { ...usage(0), estimated: true } };
    const sources = [
      batched(async function* () {
        yield [...answer, estimated];
      }),
      batched(async function* () {
        yield answer;
        yield [finish(8)];
      }),
    ];
    for (const source of sources) {
      const parts = await collect(capOutputTokens(source, 8));
      const last = parts.at(-1);
      assert.equal(last?.type, 'finish');
      assert.equal(last?.type === 'finish' ? last.finishReason : undefined, 'length');
      const text = parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
      assert.ok(countTextTokens(text) <= 8, `kept ${countTextTokens(text)} tokens`);
    }
  });
});
