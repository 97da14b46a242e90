// The shared sentence encoder serves tenants (organizations) in turn (embedding-sentence-encoder.ts):
// a long job of one tenant cannot hold the worker while another tenant's short job waits. Real worker
// thread and model; slices made small here so that the order is plain.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSentenceEncoder, type SentenceEncoder } from '../../../src/providers/builtin/embedding/embedding-sentence-encoder.ts';

describe('SentenceEncoder turns', () => {
  let encoder: SentenceEncoder;

  before(async () => {
    encoder = createSentenceEncoder({ maxTextsPerInference: 2, maxCharactersPerInference: 400 });
    await encoder.warmUp();
  });
  after(async () => {
    await encoder.close();
  });

  test("another tenant's short job is served after at most one slice of a long job (FIFO would serve it last)", async () => {
    const order: string[] = [];
    const long = encoder.embed(
      Array.from({ length: 12 }, (_, index) => `text number ${index} of the long job`),
      undefined,
      'org-long',
    );
    void long.then(() => order.push('long done'));
    const short = encoder.embed(['one short text'], undefined, 'org-short').then((vectors) => {
      order.push('short done');
      return vectors;
    });
    const [longVectors, shortVectors] = await Promise.all([long, short]);
    assert.deepEqual(order, ['short done', 'long done']);
    assert.equal(longVectors.length, 12);
    assert.equal(shortVectors.length, 1);
    assert.equal(shortVectors[0]!.length, 512);
  });

  test('the same texts give the same vectors whatever the slicing', async () => {
    const whole = createSentenceEncoder();
    try {
      const texts = ['the first sentence', 'a second one', 'and a third'];
      const [sliced, together] = await Promise.all([encoder.embed(texts, undefined, 'org-a'), whole.embed(texts)]);
      for (let index = 0; index < texts.length; index++) {
        for (let dimension = 0; dimension < 512; dimension++) {
          assert.ok(Math.abs(sliced[index]![dimension]! - together[index]![dimension]!) < 1e-4);
        }
      }
    } finally {
      await whole.close();
    }
  });
});
