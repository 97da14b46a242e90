// The block rule, enforced once for every backend: blocks never overlap, nothing is lost or reordered
// within a block, output order is start order, and open blocks are ended before the finish.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sequenceBlocks } from '../../src/core/sequence-blocks.ts';
import type { StreamPart } from '../../src/core/stream-parts.ts';
import { emptyUsage } from '../../src/core/usage.ts';

const finish: StreamPart = { type: 'finish', finishReason: 'tool-calls', usage: emptyUsage() };

async function sequenced(parts: StreamPart[]): Promise<StreamPart[]> {
  async function* source(): AsyncGenerator<StreamPart> {
    yield* parts;
  }
  const out: StreamPart[] = [];
  for await (const part of sequenceBlocks(source())) out.push(part);
  return out;
}

/** `<type> <id>[ delta]` per part, for readable expectations. */
function outline(parts: StreamPart[]): string[] {
  return parts.map((part) => {
    if (part.type === 'finish' || part.type === 'error' || part.type === 'response-metadata') return part.type;
    return 'delta' in part ? `${part.type} ${part.id} ${part.delta}` : `${part.type} ${part.id}`;
  });
}

/** No block starts while another is open. */
function assertNoOverlap(parts: StreamPart[]): void {
  let open: string | undefined;
  for (const part of parts) {
    if (part.type.endsWith('-start')) {
      assert.equal(open, undefined, `${part.type} while ${open} is open`);
      open = (part as { id: string }).id;
    } else if (part.type.endsWith('-end')) {
      assert.equal((part as { id: string }).id, open);
      open = undefined;
    }
  }
  assert.equal(open, undefined);
}

describe('sequenceBlocks', () => {
  test('interleaved parallel tool calls come out one after the other, in start order, fragments intact', async () => {
    const out = await sequenced([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Checking.' },
      { type: 'tool-input-start', id: 'A', toolName: 'weather' },
      { type: 'tool-input-delta', id: 'A', delta: '{"city":' },
      { type: 'tool-input-start', id: 'B', toolName: 'time' },
      { type: 'tool-input-delta', id: 'B', delta: '{"zone":' },
      { type: 'tool-input-delta', id: 'A', delta: '"Paris"}' },
      { type: 'tool-input-delta', id: 'B', delta: '"CET"}' },
      { type: 'text-delta', id: 't', delta: ' More.' },
      { type: 'tool-input-end', id: 'B' },
      { type: 'tool-input-end', id: 'A' },
      { type: 'text-end', id: 't' },
      finish,
    ]);
    assertNoOverlap(out);
    assert.deepEqual(outline(out), [
      'text-start t',
      'text-delta t Checking.',
      'text-delta t  More.',
      'text-end t',
      'tool-input-start A',
      'tool-input-delta A {"city":',
      'tool-input-delta A "Paris"}',
      'tool-input-end A',
      'tool-input-start B',
      'tool-input-delta B {"zone":',
      'tool-input-delta B "CET"}',
      'tool-input-end B',
      'finish',
    ]);
  });

  test('the owner streams live; a waiting block streams live once it owns the output', async () => {
    const parts: StreamPart[] = [
      { type: 'text-start', id: 'a' },
      { type: 'text-start', id: 'b' },
      { type: 'text-delta', id: 'b', delta: 'held' },
      { type: 'text-delta', id: 'a', delta: 'live' },
      { type: 'text-end', id: 'a' },
      { type: 'text-delta', id: 'b', delta: 'live too' },
      { type: 'text-end', id: 'b' },
      finish,
    ];
    const seen: string[] = [];
    async function* source(): AsyncGenerator<StreamPart> {
      for (const part of parts) {
        seen.push(`in ${outline([part])[0]}`);
        yield part;
      }
    }
    for await (const part of sequenceBlocks(source())) seen.push(`out ${outline([part])[0]}`);
    // Each part of the owner leaves as soon as it arrives; b's held delta leaves right after a ends.
    assert.deepEqual(seen.slice(0, 9), [
      'in text-start a',
      'out text-start a',
      'in text-start b',
      'in text-delta b held',
      'in text-delta a live',
      'out text-delta a live',
      'in text-end a',
      'out text-end a',
      'out text-start b',
    ]);
    assert.deepEqual(seen.slice(9, 12), ['out text-delta b held', 'in text-delta b live too', 'out text-delta b live too']);
  });

  test('blocks still open at the finish are ended in start order before it', async () => {
    const out = await sequenced([
      { type: 'tool-input-start', id: 'A', toolName: 'x' },
      { type: 'tool-input-start', id: 'B', toolName: 'y' },
      { type: 'tool-input-delta', id: 'B', delta: '{}' },
      finish,
    ]);
    assertNoOverlap(out);
    assert.deepEqual(outline(out), [
      'tool-input-start A',
      'tool-input-end A',
      'tool-input-start B',
      'tool-input-delta B {}',
      'tool-input-end B',
      'finish',
    ]);
  });

  test('redacted reasoning waits its turn; unknown-block deltas and second starts are dropped; late signatures pass', async () => {
    const out = await sequenced([
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-redacted', id: 'x', data: 'opaque' },
      { type: 'text-delta', id: 'nobody', delta: 'lost' },
      { type: 'reasoning-delta', id: 'r', delta: 'think' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'reasoning-signature', id: 'r', signature: 'sig' },
      finish,
    ]);
    assert.deepEqual(
      out.map((part) => part.type),
      ['reasoning-start', 'reasoning-delta', 'reasoning-end', 'reasoning-redacted', 'reasoning-signature', 'finish'],
    );
  });

  test('an error part passes through at once, whatever is held', async () => {
    const error = { type: 'error', error: new Error('x') } as unknown as StreamPart;
    const out = await sequenced([{ type: 'text-start', id: 'a' }, { type: 'text-start', id: 'b' }, error]);
    assert.deepEqual(
      out.map((part) => part.type),
      ['text-start', 'error'],
    );
  });
});
