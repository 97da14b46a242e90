import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import { countTokens, decode, encode } from 'gpt-tokenizer';
import { BytePairEncoder } from '../../src/core/tokenizer/byte-pair-encoder.ts';
import { loadO200k } from '../../src/core/tokenizer/o200k.ts';
import { RankTable } from '../../src/core/tokenizer/rank-table.ts';

/** The samples of gpt-tokenizer's own test plans (every encoding's; all are o200k text too). */
function testPlanSamples(): string[] {
  const plans = readFileSync(createRequire(import.meta.url).resolve('gpt-tokenizer/data/TestPlans.txt'), 'utf8');
  return [...plans.matchAll(/Sample: ([\s\S]*?)\nEncoded/g)].map((match) => match[1]!);
}

/** Deterministic mixed-script strings: ASCII, Latin and other BMP letters, CJK, emoji. */
function mixedStrings(count: number): string[] {
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const strings: string[] = [];
  for (let index = 0; index < count; index++) {
    let text = '';
    const length = 1 + Math.floor(next() * 80);
    for (let position = 0; position < length; position++) {
      const kind = next();
      if (kind < 0.5) text += String.fromCharCode(32 + Math.floor(next() * 95));
      else if (kind < 0.75) text += String.fromCharCode(0xa0 + Math.floor(next() * 0x2000));
      else if (kind < 0.9) text += String.fromCharCode(0x4e00 + Math.floor(next() * 0x5000));
      else text += String.fromCodePoint(0x1f300 + Math.floor(next() * 0x300));
    }
    strings.push(text);
  }
  return strings;
}

describe('o200k byte-pair encoder', () => {
  const encoder = loadO200k();

  test('encodes exactly as gpt-tokenizer does: its test plans, source text and 2,000 mixed-script strings', () => {
    const samples = [
      ...testPlanSamples(),
      readFileSync(new URL('../../README.md', import.meta.url), 'utf8'),
      readFileSync(new URL('../../src/core/count-tokens.ts', import.meta.url), 'utf8'),
      ...mixedStrings(2000),
      // Lone surrogates are encoded as U+FFFD, by both.
      'a\ud800b',
      '\udfff',
      'x \ud83d',
      '\ud83d\ude00\ud83d',
      '<|endoftext|> is ordinary text here',
    ];
    assert.ok(samples.length > 2200);
    for (const text of samples) {
      const expected = encode(text, { disallowedSpecial: new Set() });
      assert.deepEqual(encoder.encode(text), expected, JSON.stringify(text.slice(0, 60)));
      assert.equal(encoder.count(text), expected.length);
    }
  });

  test('decodes back to the text; a character cut by the end becomes U+FFFD', () => {
    for (const text of ['Hello, world!', 'naïve café 你好 🎉🇪🇸', ' \n\t  x', '']) assert.equal(encoder.decode(encoder.encode(text)), text);
    assert.deepEqual(encoder.decode(encode('🎉')), decode(encode('🎉')));
    const firstByteOfEmoji = encoder.encode('🎉').slice(0, 1);
    assert.equal(encoder.decode(firstByteOfEmoji).endsWith('\uFFFD'), true);
    assert.equal(encoder.decode([-1, 1.5, 10_000_000]), '');
  });

  test('special-token strings are ordinary text: counted, never refused', () => {
    const text = 'Quote <|endoftext|> and <|im_start|>user then <|fim_prefix|>.';
    assert.throws(() => countTokens(text)); // gpt-tokenizer's default refuses them
    assert.deepEqual(encoder.encode(text), encode(text, { disallowedSpecial: new Set() }));
  });

  test('a tiny hand-made table merges lowest rank first, leftmost on a tie', () => {
    const line = (token: string, rank: number): string => `${Buffer.from(token).toString('base64')} ${rank}`;
    const ranks = ['a', 'b', 'c', 'ab', 'bc', 'abc'].map((token, rank) => line(token, rank)).join('\n');
    const tiny = new BytePairEncoder(RankTable.fromTiktoken(Buffer.from(`${ranks}\n`)), /[a-c]+|./gu);
    // "abc" is a token itself: one lookup.
    assert.deepEqual(tiny.encode('abc'), [5]);
    // "abcb": ab (3) before bc (4), giving [ab, c, b]; then ab+c is abc (5).
    assert.deepEqual(tiny.encode('abcb'), [5, 1]);
    // "bcab": bc (4) and ab (3): ab first, leaving [b, c, ab] -> bc -> [bc, ab].
    assert.deepEqual(tiny.encode('bcab'), [4, 3]);
    assert.equal(tiny.count('cccc'), 4);
  });

  test('a malformed rank file is refused with the line named', () => {
    assert.throws(() => RankTable.fromTiktoken(Buffer.from('YQ== 0\nnot-a-line\n')), /malformed rank line: not-a-line/);
    assert.throws(() => RankTable.fromTiktoken(Buffer.from('YQ== 0\nYg== x\n')), /malformed rank line/);
    assert.throws(() => RankTable.fromTiktoken(Buffer.from('YQ== 0\nYg== 0\n')), /rank 0 is listed twice/);
    assert.throws(() => RankTable.fromTiktoken(Buffer.from('Y!Q= 0\n')), /malformed rank line/);
  });
});
