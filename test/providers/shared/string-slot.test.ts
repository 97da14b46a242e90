import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StringSlot } from '../../../src/providers/shared/string-slot.ts';

/** A probe check that accepts when the sentinel lands in `value.delta.text`. */
function inDeltaText(probe: unknown, sentinel: string): boolean {
  return (probe as { delta?: { text?: unknown } } | undefined)?.delta?.text === sentinel;
}

const EVENT = '{"type":"d","delta":{"text":"Hello"},"n":1}';

describe('StringSlot', () => {
  test('a text with the same prefix and suffix around one string literal gives that string, escapes decoded', () => {
    const slot = StringSlot.find(EVENT, 'text', inDeltaText)!;
    const around = (literal: string): string => `{"type":"d","delta":{"text":${literal}},"n":1}`;
    assert.equal(slot.match(around('"world"')), 'world');
    assert.equal(slot.match(around('""')), '');
    assert.equal(slot.match(around('"a \\"b\\" \\\\ \\n \\u00e9 \\ud83d\\ude00"')), 'a "b" \\ \n é 😀');
    assert.equal(slot.match(around('"é 😀 \u2028"')), 'é 😀 \u2028');
  });

  test('anything but exactly one string literal between the prefix and the suffix does not match', () => {
    const slot = StringSlot.find(EVENT, 'text', inDeltaText)!;
    const around = (middle: string): string => `{"type":"d","delta":{"text":${middle}},"n":1}`;
    for (const middle of ['"a","text":"b"', '"a\nb"', '"a\\"', '"\\x"', 'null', '1', '"a" ', ' "a"', '""""', '"', ''])
      assert.equal(slot.match(around(middle)), undefined, JSON.stringify(middle));
    assert.equal(slot.match(EVENT.replace('"n":1', '"n":2')), undefined);
    assert.equal(slot.match(`x${EVENT}`), undefined);
  });

  test('white space around the colon is allowed; a key whose value is not a string gives no slot', () => {
    const spaced = '{"type":"d","delta":{"text" :\n "Hello"},"n":1}';
    assert.equal(StringSlot.find(spaced, 'text', inDeltaText)?.match(spaced.replace('Hello', 'Bye')), 'Bye');
    assert.equal(StringSlot.find('{"delta":{"text":null}}', 'text', inDeltaText), undefined);
    assert.equal(StringSlot.find('{"delta":{"other":"x"}}', 'text', inDeltaText), undefined);
    assert.equal(StringSlot.find('{"delta":{"text":"unterminated}}', 'text', inDeltaText), undefined);
  });

  test('free slots take any string literal, before or after the value; the probe sees a second sentinel there', () => {
    const event = (text: string, padding: string): string => JSON.stringify({ pad: padding, delta: { text }, tail: padding });
    let probed: unknown;
    const slot = StringSlot.find(
      event('a', 'p'),
      'text',
      (probe, sentinel) => {
        probed = probe;
        return inDeltaText(probe, sentinel);
      },
      ['pad', 'tail', 'absent'],
    )!;
    assert.deepEqual(probed, { pad: '\u0002', delta: { text: '\u0001' }, tail: '\u0002' });
    assert.equal(slot.match(event('b', 'longer padding "quoted"')), 'b');
    assert.equal(slot.match(event('c', '')), 'c');
    assert.equal(slot.match(JSON.stringify({ pad: 'p', delta: { text: 'd' }, tail: 1 })), undefined);
    // A key that is both the value and free would be two slots in one place: no slot.
    assert.equal(StringSlot.find(event('a', 'p'), 'text', inDeltaText, ['text']), undefined);
    // Without free keys, the same slot takes only the learnt padding.
    const strict = StringSlot.find(event('a', 'p'), 'text', inDeltaText)!;
    assert.equal(strict.match(event('b', 'p')), 'b');
    assert.equal(strict.match(event('b', 'q')), undefined);
  });

  test('the probe decides: a slot is made only when the sentinel lands where the reader looks', () => {
    // The first `"text":` belongs to `note`, not to the delta.
    const decoy = '{"note":{"text":"x"},"delta":{"text":"x"}}';
    assert.equal(StringSlot.find(decoy, 'text', inDeltaText), undefined);
    let seen: unknown;
    StringSlot.find(EVENT, 'text', (probe, sentinel) => {
      seen = { probe, sentinel };
      return false;
    });
    assert.deepEqual(seen, { probe: { type: 'd', delta: { text: '\u0001' }, n: 1 }, sentinel: '\u0001' });
  });
});
