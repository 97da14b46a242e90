import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import { DeltaTemplate } from '../../../src/providers/anthropic/delta-template.ts';
import { AnthropicStreamMapper } from '../../../src/providers/anthropic/map-anthropic-stream.ts';
import { readEvent, type AnthropicEventView } from '../../../src/providers/anthropic/anthropic-wire.ts';

function parsed(data: string): AnthropicEventView | undefined {
  try {
    return readEvent(JSON.parse(data));
  } catch {
    return undefined;
  }
}

/** Feeds `data` as the provider does: a templated read, else a full parse that may teach the template. */
function feed(template: DeltaTemplate, data: string): { view: AnthropicEventView | undefined; templated: boolean } {
  const templated = template.read(data);
  if (templated !== undefined) return { view: templated, templated: true };
  const view = parsed(data);
  if (view !== undefined) template.learn(data, view);
  return { view, templated: false };
}

function delta(index: number, body: Record<string, unknown>): string {
  return JSON.stringify({ type: 'content_block_delta', index, delta: body });
}

/** A recorded Anthropic stream (test/fixtures), one event's JSON text per line as the API writes it. */
function recorded(file: string): string[] {
  return readFileSync(new URL(`../../fixtures/anthropic-messages/${file}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.stringify(JSON.parse(line)));
}

describe('DeltaTemplate', () => {
  test('recorded streams (thinking, signature, text; tool input) read exactly as a full parse, most deltas without one', () => {
    for (const file of ['recorded-thinking-stream.jsonl', 'recorded-tool-no-args-stream.jsonl']) {
      const template = new DeltaTemplate();
      let templated = 0;
      for (const data of recorded(file)) {
        const result = feed(template, data);
        assert.deepEqual(result.view, parsed(data), data);
        if (result.templated) templated++;
      }
      if (file.includes('thinking')) assert.ok(templated > 0, 'the thinking and text deltas after the first of each block are templated');
    }
  });

  test('text, thinking and tool input deltas are learnt from the first of their block and read after it', () => {
    for (const [type, key] of [
      ['text_delta', 'text'],
      ['thinking_delta', 'thinking'],
      ['input_json_delta', 'partial_json'],
    ] as const) {
      const template = new DeltaTemplate();
      const texts = ['Hel', 'lo "world"', '\\ \n é 😀', ''];
      const results = texts.map((text) => feed(template, delta(2, { type, [key]: text })));
      assert.deepEqual(
        results.map((result) => result.templated),
        [false, true, true, true],
        type,
      );
      for (const [position, result] of results.entries()) assert.deepEqual(result.view, parsed(delta(2, { type, [key]: texts[position] })));
    }
  });

  test('a delta of the next block is parsed (and teaches the template); other events and signatures are never templated', () => {
    const template = new DeltaTemplate();
    feed(template, delta(0, { type: 'text_delta', text: 'a' }));
    const next = feed(template, delta(1, { type: 'text_delta', text: 'b' }));
    assert.equal(next.templated, false);
    assert.equal(feed(template, delta(1, { type: 'text_delta', text: 'c' })).templated, true);
    for (const data of [
      JSON.stringify({ type: 'content_block_stop', index: 1 }),
      delta(1, { type: 'signature_delta', signature: 'c' }),
      delta(1, { type: 'thinking_delta', thinking: 'c' }),
      delta(1, { type: 'text_delta', text: 'c', extra: 'x' }),
      JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } }),
    ])
      assert.equal(template.read(data), undefined, data);
    // A signature delta teaches nothing: the text template stays.
    feed(template, delta(1, { type: 'signature_delta', signature: 'sig' }));
    assert.equal(feed(template, delta(1, { type: 'text_delta', text: 'd' })).templated, true);
  });

  test('a decoy key the probe rejects teaches nothing, and failed probes end learning', () => {
    // The only plain `"text":` is in another object; the delta's key is written with an escape.
    const decoy = (text: string): string =>
      `{"type":"content_block_delta","note":{"text":"${text}"},"index":0,"delta":{"type":"text_delta","\\u0074ext":"${text}"}}`;
    const template = new DeltaTemplate();
    assert.equal(feed(template, decoy('a')).view?.type, 'content_block_delta');
    assert.equal(template.read(decoy('a').replace('"note":{"text":"a"}', '"note":{"text":"zzz"}')), undefined);
    for (let index = 0; index < 7; index++) feed(template, decoy(`b${index}`));
    feed(template, delta(0, { type: 'text_delta', text: 'plain' }));
    assert.equal(template.read(delta(0, { type: 'text_delta', text: 'plainer' })), undefined);
  });

  test('a random mix of deltas, blocks and events always reads as the full parse does', () => {
    let seed = 11;
    const random = (limit: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % limit;
    };
    const alphabet = ['a', ' ', '"', '\\', '\n', 'é', '😀', '{', '}', 'text', '\u0000'];
    for (let round = 0; round < 50; round++) {
      const template = new DeltaTemplate();
      for (let index = 0; index < 40; index++) {
        const text = Array.from({ length: random(6) }, () => alphabet[random(alphabet.length)]).join('');
        const block = random(3);
        const kind = random(8);
        const data =
          kind === 0
            ? JSON.stringify({ type: 'content_block_stop', index: block })
            : kind === 1
              ? delta(block, { type: 'thinking_delta', thinking: text })
              : kind === 2
                ? delta(block, { type: 'input_json_delta', partial_json: text })
                : delta(block, { type: 'text_delta', text });
        const result = feed(template, data);
        assert.deepEqual(result.view, parsed(data), data);
      }
    }
  });

  test('the provider path (readValue, then mapDeltaValue without a view) makes the parts a full parse and map make', () => {
    let seed = 5;
    const random = (limit: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % limit;
    };
    const texts = ['', ' word', 'a "quoted" word', 'back\\slash', 'line\nbreak', 'héllo 😀', '\u2028', '{"a":1}', 'null'];
    for (const jsonToolName of [undefined, 'json_output'])
      for (let round = 0; round < 40; round++) {
        const events = [JSON.stringify({ type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 3 } } })];
        const blocks = [
          { type: 'thinking', thinking: '' },
          { type: 'text', text: '' },
          { type: 'tool_use', id: 'toolu_1', name: 'get', input: { given: 'whole' } },
          { type: 'tool_use', id: 'toolu_2', name: 'json_output', input: { answer: 1 } },
        ];
        blocks.forEach((block, index) => {
          events.push(JSON.stringify({ type: 'content_block_start', index, content_block: block }));
          for (let count = 0; count < 8; count++) {
            const text = texts[random(texts.length)]!;
            const kind = random(4);
            events.push(
              delta(
                index,
                kind === 0
                  ? { type: 'text_delta', text }
                  : kind === 1
                    ? { type: 'thinking_delta', thinking: text }
                    : kind === 2
                      ? { type: 'input_json_delta', partial_json: text }
                      : { type: 'signature_delta', signature: text },
              ),
            );
            // A delta of another block now and then: its block's own template is learnt anew.
            if (random(5) === 0) events.push(delta(random(blocks.length), { type: 'text_delta', text }));
          }
          events.push(JSON.stringify({ type: 'content_block_stop', index }));
        });
        events.push(JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }));
        events.push(JSON.stringify({ type: 'message_stop' }));
        const template = new DeltaTemplate();
        const fast = new AnthropicStreamMapper(jsonToolName);
        const plain = new AnthropicStreamMapper(jsonToolName);
        const fastParts: StreamPart[] = [];
        const plainParts: StreamPart[] = [];
        let templated = 0;
        for (const data of events) {
          plainParts.push(...plain.map(parsed(data)!));
          const value = template.readValue(data);
          if (value !== undefined) {
            templated++;
            fast.mapDeltaValue(template.blockIndex, template.deltaKind, template.valueField, value, fastParts);
            continue;
          }
          const view = parsed(data)!;
          template.learn(data, view);
          fastParts.push(...fast.map(view));
        }
        assert.deepEqual(fastParts, plainParts);
        assert.ok(templated > 0, 'some deltas were read by the template');
      }
  });
});
