/**
 * Token throughput of the llama-cpp provider on the tiny test GGUF (test/support/tiny-gguf), printed,
 * never asserted. It measures the provider and node-llama-cpp's per-token overhead (chat template,
 * sampling, detokenization, streaming parts) more than model compute: the model is 2 blocks of width 64.
 * Each figure generates for about 1.5 s: one stream at a time, then 4 concurrent streams (one per
 * context sequence, evaluated in shared batches).
 *
 *   node --import tsx bench/llama-cpp.ts [threads]     (default: 1, then the core count)
 */
import { availableParallelism } from 'node:os';
import type { LanguageModel } from '../src/core/language-model.ts';
import { createLlamaCppProvider } from '../src/providers/llama-cpp/llama-cpp-provider.ts';
import { buildTinyLlamaGguf } from '../test/support/tiny-gguf/build-tiny-llama.ts';

const RUN_MS = 1500;
const TOKENS_PER_REQUEST = 200;

/**
 * Runs `streams` generation loops in parallel for RUN_MS (the streams running at the deadline are
 * aborted); returns generated tokens per second. Finished requests count their usage; an aborted one
 * counts its text deltas (one per token on this model, but for the first word).
 */
async function measure(model: LanguageModel, streams: number): Promise<number> {
  let tokens = 0;
  const started = performance.now();
  const deadline = AbortSignal.timeout(RUN_MS);
  await Promise.all(
    Array.from({ length: streams }, async (_, index) => {
      while (!deadline.aborted) {
        const request = {
          model: 'tiny',
          messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: `Benchmark stream ${index}` }] }],
          maxOutputTokens: TOKENS_PER_REQUEST,
        };
        let deltas = 0;
        try {
          for await (const part of model.stream(request, { signal: deadline })) {
            if (part.type === 'text-delta') deltas++;
            if (part.type === 'finish') tokens += part.usage.outputTokens;
          }
        } catch {
          tokens += deltas; // stopped at the deadline
        }
      }
    }),
  );
  return (tokens * 1000) / (performance.now() - started);
}

const requested = Number(process.argv[2]);
const threadCounts = Number.isInteger(requested) && requested > 0 ? [requested] : [...new Set([1, availableParallelism()])];
const path = buildTinyLlamaGguf();
for (const threads of threadCounts) {
  const provider = createLlamaCppProvider(
    {
      kind: 'llama-cpp',
      id: 'bench',
      threads,
      sequencesPerModel: 4,
      maxContextTokens: 1024,
      timeoutMs: 60_000,
      maxRetries: 0,
      headers: {},
    },
    {},
  );
  const model = provider.languageModel!(path);
  // Warm-up: loads llama.cpp and the model.
  for await (const part of model.stream({ model: 'tiny', messages: [], maxOutputTokens: 1 }, { signal: new AbortController().signal }))
    void part;
  for (const streams of [1, 4]) {
    const perSecond = await measure(model, streams);
    console.log(
      `tiny GGUF, ${threads} thread(s), ${streams} concurrent stream(s)`.padEnd(52),
      `${perSecond.toFixed(0).padStart(7)} tokens/s`,
    );
  }
  await provider.close?.();
}
