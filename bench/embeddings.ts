/**
 * Embeddings throughput, printed (never asserted):
 * - the built-in model (Universal Sentence Encoder lite in a worker thread): one text per call, one
 *   call at a time; 32 callers with one text each at once (coalesced into shared batches); 64 texts per call;
 * - an OpenAI-compatible upstream (the mock upstream of test/support, answering 512-dimension vectors
 *   at once), which measures Switchyard's own overhead: request encoding, undici, JSON decoding.
 * Each figure runs for about 1.5 s.
 *
 *   node --import tsx bench/embeddings.ts
 */
import { createSentenceEncoder } from '../src/providers/builtin/embedding/embedding-sentence-encoder.ts';
import { createBuiltinEmbeddingModel } from '../src/providers/builtin/embedding/embedding-model.ts';
import { OpenAICompatibleEmbeddingModel } from '../src/providers/openai-compatible/openai-compatible-embedding-model.ts';
import { UpstreamHttpClient } from '../src/providers/shared/http-client.ts';
import type { EmbeddingModel } from '../src/core/language-model.ts';
import { MockOpenAIServer, type RecordedRequest } from '../test/support/mock-upstreams/index.ts';

const RUN_MS = 1500;
const SENTENCES = [
  'The quarterly report shows steady growth in every region.',
  'How do I reset the password of my account?',
  'A small cafe on the corner serves the best coffee in town.',
  'The train to the airport leaves every twenty minutes.',
  'Machine learning models turn text into vectors of numbers.',
  'Please remember to water the plants while I am away.',
  'The museum exhibition opens to the public next Saturday.',
  'Our team fixed the bug that crashed the server at midnight.',
];
const textAt = (index: number): string => `${SENTENCES[index % SENTENCES.length]} (${index})`;

/** Runs `callers` loops in parallel, each embedding `batch` texts per call, for RUN_MS; returns texts per second. */
async function measure(model: EmbeddingModel, batch: number, callers: number): Promise<number> {
  let texts = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() - started < RUN_MS) {
        await model.embed(
          Array.from({ length: batch }, (_, index) => textAt(texts + index)),
          { signal: new AbortController().signal },
        );
        texts += batch;
      }
    }),
  );
  return (texts * 1000) / (performance.now() - started);
}

function report(label: string, perSecond: number): void {
  console.log(`${label.padEnd(58)} ${perSecond.toFixed(0).padStart(7)} embeddings/s`);
}

const encoder = createSentenceEncoder();
const builtin = createBuiltinEmbeddingModel(encoder);
await encoder.warmUp();
await builtin.embed(SENTENCES, { signal: new AbortController().signal }); // the first inference compiles kernels
report('built-in, 1 text per call, 1 caller', await measure(builtin, 1, 1));
report('built-in, 1 text per call, 32 concurrent callers', await measure(builtin, 1, 32));
report('built-in, 64 texts per call, 1 caller', await measure(builtin, 64, 1));
await encoder.close();

const upstream = await new MockOpenAIServer().start();
const vector = Array.from({ length: 512 }, (_, index) => Math.sin(index));
const reply = (request: RecordedRequest) => {
  const input = (request.body as { input: string[] }).input;
  return {
    type: 'json' as const,
    body: {
      object: 'list',
      data: input.map((_, index) => ({ object: 'embedding', index, embedding: vector })),
      model: 'mock',
      usage: { prompt_tokens: input.length * 12, total_tokens: input.length * 12 },
    },
  };
};
// The mock answers queued behaviours one per request; enough for every run below.
for (let index = 0; index < 200_000; index++) upstream.enqueue(reply);
const client = new UpstreamHttpClient({ baseUrl: upstream.baseUrl, timeoutMs: 10_000 });
const remote = new OpenAICompatibleEmbeddingModel(client, { upstreamModel: 'mock', headers: {} });
report('upstream (mock), 1 text per call, 8 concurrent callers', await measure(remote, 1, 8));
report('upstream (mock), 256 texts per call, 1 caller', await measure(remote, 256, 1));
report('upstream (mock), 1024 texts per call (4 batches of 256)', await measure(remote, 1024, 1));
await client.close();
await upstream.close();
