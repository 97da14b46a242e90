import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import { ChunkTemplate } from '../../../src/providers/openai-compatible/chunk-template.ts';
import { OpenAICompatibleStreamMapper } from '../../../src/providers/openai-compatible/map-openai-compatible-stream.ts';
import { readChunk, type OpenAIChunkView } from '../../../src/providers/openai-compatible/openai-compatible-wire.ts';

/** The view a full parse gives: what every templated read must equal. */
function parsed(data: string): OpenAIChunkView | undefined {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return undefined;
  }
  return readChunk(json);
}

/** Feeds `data` as the provider does: a templated read, else a full parse that may teach the template. */
function feed(template: ChunkTemplate, data: string): { view: OpenAIChunkView | undefined; templated: boolean } {
  const templated = template.read(data);
  if (templated !== undefined) return { view: templated, templated: true };
  const view = parsed(data);
  if (view !== undefined) template.learn(data, view);
  return { view, templated: false };
}

function chunk(delta: Record<string, unknown>, extra: Record<string, unknown> = {}, finishReason: string | null = null): string {
  return JSON.stringify({
    id: 'chatcmpl-7',
    object: 'chat.completion.chunk',
    created: 1_764_000_000,
    model: 'qwen',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...extra,
  });
}

const TRICKY_TEXTS = [
  ' word',
  '',
  'a "quoted" word',
  'back\\slash',
  'line\nbreak\ttab',
  'héllo wörld 😀',
  '\u2028\u2029',
  '"content":"x"',
  '\\"',
  'null',
  '}]}',
];

describe('ChunkTemplate', () => {
  test('a stream of text deltas: learnt from the first plain delta, every later one read without parsing, equal to a full parse', () => {
    const template = new ChunkTemplate();
    const stream = [chunk({ role: 'assistant', content: '' }), ...TRICKY_TEXTS.map((text) => chunk({ content: text }))];
    const results = stream.map((data) => ({ data, ...feed(template, data) }));
    for (const { data, view } of results) assert.deepEqual(view, parsed(data), data);
    // The role chunk (its empty text teaches nothing) and the first text chunk are parsed; the rest are not.
    assert.deepEqual(
      results.map((result) => result.templated),
      [false, false, ...TRICKY_TEXTS.slice(1).map(() => true)],
    );
  });

  test('empty deltas (role announcements) teach nothing and spend no probe', () => {
    const template = new ChunkTemplate();
    for (let index = 0; index < 5; index++) feed(template, chunk({ role: 'assistant', content: '' }, { n: index }));
    feed(template, chunk({ content: 'a' }));
    assert.equal(feed(template, chunk({ content: 'b' })).templated, true);
  });

  test('escaped text in the wire (\\u escapes, escaped slashes) reads as the full parse does', () => {
    const template = new ChunkTemplate();
    const first = chunk({ content: 'a' });
    feed(template, first);
    const escaped = first.replace('"content":"a"', '"content":"caf\\u00e9 \\/ \\ud83d\\ude00"');
    const result = feed(template, escaped);
    assert.equal(result.templated, true);
    assert.deepEqual(result.view, parsed(escaped));
    assert.equal(result.view?.choices[0]?.content, 'café / 😀');
  });

  test('reasoning deltas, under either key, are templated into reasoning', () => {
    for (const key of ['reasoning_content', 'reasoning']) {
      const template = new ChunkTemplate();
      feed(template, chunk({ [key]: 'think' }));
      const next = chunk({ [key]: 'ing "hard"' });
      const result = feed(template, next);
      assert.equal(result.templated, true, key);
      assert.deepEqual(result.view, parsed(next));
      assert.equal(result.view?.choices[0]?.reasoning, 'ing "hard"');
    }
  });

  test('white space around the key and value (a pretty-printing server) still learns', () => {
    const template = new ChunkTemplate();
    const pretty = (text: string): string => JSON.stringify(JSON.parse(chunk({ content: text })), null, 1);
    feed(template, pretty('one'));
    const result = feed(template, pretty('two'));
    assert.equal(result.templated, true);
    assert.deepEqual(result.view, parsed(pretty('two')));
  });

  test('chunks that carry anything besides the delta text are parsed in full', () => {
    const template = new ChunkTemplate();
    feed(template, chunk({ content: 'a' }));
    const others = [
      chunk({}, {}, 'stop'),
      chunk({ content: 'b' }, {}, 'length'),
      chunk({ content: 'b' }, { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
      chunk({ content: 'b', tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '' } }] }),
      chunk({ content: 'b', refusal: 'no' }),
      JSON.stringify({ id: 'chatcmpl-7', choices: [] }),
      chunk({ content: 'b' }).replace('chatcmpl-7', 'chatcmpl-8'),
      `${chunk({ content: 'b' })} `,
    ];
    for (const data of others) {
      assert.equal(template.read(data), undefined, data);
    }
  });

  test('a middle that is not exactly one string literal is not read (the full parse decides)', () => {
    const template = new ChunkTemplate();
    const first = chunk({ content: 'a' });
    feed(template, first);
    const at = first.indexOf('"a"');
    const around = (middle: string): string => first.slice(0, at) + middle + first.slice(at + 3);
    for (const middle of ['"a","content":"b"', '"a\nb"', '"a\\"', '"\\x"', 'null', '"a" ', '""""']) {
      const data = around(middle);
      assert.equal(template.read(data), undefined, middle);
    }
    assert.equal(template.read(around('"ok"'))?.choices[0]?.content, 'ok');
  });

  test('the key written twice, or once elsewhere: reads still equal the full parse, or nothing is learnt', () => {
    // `logprobs.content` repeats the key after the delta's.
    const withLogprobs = (text: string, token: string): string =>
      JSON.stringify({
        id: 'x',
        choices: [{ index: 0, delta: { content: text }, logprobs: { content: [{ token, logprob: -1 }] }, finish_reason: null }],
      });
    const twice = new ChunkTemplate();
    feed(twice, withLogprobs('a', 't'));
    const next = withLogprobs('b', 't');
    assert.deepEqual(feed(twice, next), { view: parsed(next), templated: true });

    // The text `content` itself.
    const sameWord = new ChunkTemplate();
    feed(sameWord, chunk({ content: 'content' }));
    const word = chunk({ content: 'next' });
    assert.deepEqual(feed(sameWord, word), { view: parsed(word), templated: true });

    // The only plain `"content":` belongs to another object; the delta's key is written with an escape.
    // The probe finds that the sentinel does not land in the delta, so nothing is learnt.
    const decoy = (text: string): string =>
      `{"id":"x","note":{"content":"${text}"},"choices":[{"index":0,"delta":{"\\u0063ontent":"${text}"}}]}`;
    const fooled = new ChunkTemplate();
    assert.equal(feed(fooled, decoy('a')).view?.choices[0]?.content, 'a');
    assert.equal(fooled.read(decoy('b')), undefined);
    assert.equal(fooled.read(decoy('a').replace('"note":{"content":"a"}', '"note":{"content":"zzz"}')), undefined);

    // Probes that fail count too: after four, a stream of plain deltas is no longer learnt.
    for (let index = 0; index < 3; index++) feed(fooled, decoy(`c${index}`));
    feed(fooled, chunk({ content: 'plain' }));
    assert.equal(fooled.read(chunk({ content: 'plainer' })), undefined);

    const both = new ChunkTemplate();
    feed(both, chunk({ reasoning_content: 'a', reasoning: 'a' }));
    assert.equal(both.read(chunk({ reasoning_content: 'b', reasoning: 'b' })), undefined);
  });

  test("OpenAI's obfuscation padding, new in every chunk, is a free slot: chunks are still read without parsing", () => {
    const template = new ChunkTemplate();
    const padding = ['', 'x', 'Zq9', 'aaaaaaaaaaaaaaaaaaaa', 'é😀', 'a\\"b', 'k'];
    const obfuscated = (index: number): string =>
      JSON.stringify({
        id: 'chatcmpl-7',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-4o',
        service_tier: 'default',
        system_fingerprint: 'fp_1',
        choices: [{ index: 0, delta: { content: `w${index}` }, logprobs: null, finish_reason: null }],
        usage: null,
        obfuscation: padding[index % padding.length],
      });
    const results = Array.from({ length: 14 }, (_, index) => ({ data: obfuscated(index), ...feed(template, obfuscated(index)) }));
    for (const { data, view } of results) assert.deepEqual(view, parsed(data), data);
    assert.deepEqual(
      results.map((result) => result.templated),
      [false, ...Array.from({ length: 13 }, () => true)],
    );
    // A free slot still has to hold one valid string literal (a raw control character is not JSON).
    const withPadding = (literal: string): string => obfuscated(1).replace('"obfuscation":"x"', `"obfuscation":${literal}`);
    for (const literal of ['"x\u0001y"', '1', 'null', '"x","more":"y"', '"\\q"'])
      assert.equal(template.read(withPadding(literal)), undefined, literal);
    assert.equal(template.read(withPadding('"\\u0041"'))?.choices[0]?.content, 'w1');
  });

  test('a recorded OpenAI stream (gpt-4.1-nano, obfuscation on): every chunk reads as its full parse, nearly all without one', () => {
    const template = new ChunkTemplate();
    const lines = readFileSync(new URL('../../fixtures/providers/openai-text.chunks.txt', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'));
    const results = lines.map((data) => ({ data, ...feed(template, data) }));
    for (const { data, view } of results) assert.deepEqual(view, parsed(data), data);
    const parsedInFull = results.filter((result) => !result.templated).length;
    // The role chunk, the first text chunk, the finish chunk and the usage chunk.
    assert.ok(lines.length > 250);
    assert.equal(parsedInFull, 4);
  });

  test('a server that changes another field in every chunk stops being learnt after a few tries', () => {
    const template = new ChunkTemplate();
    const counted = (index: number): string => chunk({ content: `w${index}` }, { n: index });
    for (let index = 0; index < 10; index++) {
      const data = counted(index);
      const result = feed(template, data);
      assert.equal(result.templated, false);
      assert.deepEqual(result.view, parsed(data));
    }
    // Learning has stopped: a chunk of the last shape is not templated either.
    assert.equal(template.read(chunk({ content: 'again' }, { n: 9 })), undefined);
  });

  test('a random mix of texts and chunk kinds always reads as the full parse does', () => {
    let seed = 7;
    const random = (limit: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % limit;
    };
    const alphabet = ['a', ' ', '"', '\\', '\n', 'é', '😀', '{', '}', ':', ',', '\u0000', 'content'];
    for (let round = 0; round < 50; round++) {
      const template = new ChunkTemplate();
      for (let index = 0; index < 40; index++) {
        const text = Array.from({ length: random(6) }, () => alphabet[random(alphabet.length)]).join('');
        const kind = random(10);
        const data =
          kind === 0
            ? chunk({}, {}, 'stop')
            : kind === 1
              ? chunk({ reasoning_content: text })
              : kind < 5
                ? chunk({ content: text }, { obfuscation: text })
                : chunk({ content: text });
        const result = feed(template, data);
        assert.deepEqual(result.view, parsed(data), data);
      }
    }
  });

  test('the provider path (readDelta, then mapDelta without a view) makes the parts a full parse and mapInto make', () => {
    let seed = 11;
    const random = (limit: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % limit;
    };
    for (let round = 0; round < 50; round++) {
      const template = new ChunkTemplate();
      const fast = new OpenAICompatibleStreamMapper();
      const plain = new OpenAICompatibleStreamMapper();
      const fastParts: StreamPart[] = [];
      const plainParts: StreamPart[] = [];
      let templated = 0;
      const stream = [chunk({ role: 'assistant', content: '' })];
      for (let index = 0; index < 30; index++) {
        const text = TRICKY_TEXTS[random(TRICKY_TEXTS.length)]!;
        const kind = random(8);
        stream.push(
          kind === 0
            ? chunk({ reasoning_content: text })
            : kind === 1
              ? chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: text } }] })
              : kind === 2
                ? chunk({ content: text }, { obfuscation: text })
                : chunk({ content: text }),
        );
      }
      stream.push(chunk({}, {}, 'stop'));
      for (const data of stream) {
        plain.mapInto(parsed(data)!, plainParts);
        const delta = template.readDelta(data);
        if (delta !== undefined) {
          templated++;
          fast.mapDelta(template.kind, delta, template.chunkId, template.chunkModel, fastParts);
          continue;
        }
        const view = parsed(data)!;
        template.learn(data, view);
        fast.mapInto(view, fastParts);
      }
      plainParts.push(...plain.finish());
      fastParts.push(...fast.finish());
      assert.deepEqual(fastParts, plainParts);
      assert.ok(templated > 0, 'some chunks were read by the template');
    }
  });
});
