/**
 * A change to the streamed path against its base, in one process: this checkout's modules and another
 * checkout's (`--base <checkout>`, its sources: no build needed) are loaded side by side and measured in
 * interleaved pairs (the order alternates by round), so each pair sees the same moment of a shared
 * machine. Two levels:
 *   - the providers' stream reading alone (SSE parse, delta templates, mapping to parts): an
 *     OpenAI-compatible and an Anthropic answer of 20 text deltas, each in one read;
 *   - the in-process pipeline (support/in-process-pipeline.ts: decode to the SSE serialiser) for every
 *     format, streamed, with the JSON cases as a control (`--json`): their path is not the stream's.
 * CPU µs per call with 50 in flight; prints the medians and each case's median ratio over the pairs
 * with its range. On a loaded machine the pairs spread by ±20-30%: read the median of many pairs.
 *
 *   node --import tsx bench/stream-path-paired.ts --base /tmp/base [rounds] [calls] [--json]
 */
import { cannedChatAnswer } from './support/canned-chat-answer.ts';
import { cpuMicrosecondsPerCall } from './support/cpu-per-request.ts';
import { GENERATION_CASES } from './support/generation-cases.ts';

const baseFlag = process.argv.indexOf('--base');
if (baseFlag === -1) throw new Error('usage: bench/stream-path-paired.ts --base <checkout> [rounds] [calls] [--json]');
const baseCheckout = process.argv[baseFlag + 1]!;
const numbers = process.argv.filter((argument, index) => /^\d+$/.test(argument) && index !== baseFlag + 1).map(Number);
const rounds = numbers[0] ?? 12;
const calls = numbers[1] ?? 4000;
const withJson = process.argv.includes('--json');
const thisCheckout = new URL('..', import.meta.url).pathname;

const openAIStream = Buffer.from(cannedChatAnswer(20, 1_764_000_000).stream);
const anthropicEvent = (type: string, body: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
const words = Array.from({ length: 20 }, (_, index) => (index === 0 ? 'Hello' : ` word${index}`));
const anthropicStream = Buffer.from(
  anthropicEvent('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content: [],
      usage: { input_tokens: 12, output_tokens: 1 },
    },
  }) +
    anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
    anthropicEvent('ping', {}) +
    words.map((text) => anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })).join('') +
    anthropicEvent('content_block_stop', { index: 0 }) +
    anthropicEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } }) +
    anthropicEvent('message_stop', {}),
);

interface StreamingModel {
  stream(request: unknown, options: { signal: AbortSignal }): { batches(): AsyncIterable<readonly unknown[]> };
}
type Case = { name: string; run: () => Promise<number> };

/** One checkout's cases: the two providers' reads and the pipeline's formats. */
async function casesOf(checkout: string): Promise<{ cases: Case[]; close: () => Promise<void> }> {
  const source = (path: string): string => new URL(path, `file://${checkout.endsWith('/') ? checkout : `${checkout}/`}`).href;
  const { UpstreamBody } = await import(source('src/providers/shared/upstream-body.ts'));
  const openAI = await import(source('src/providers/openai-compatible/openai-compatible-chat-language-model.ts'));
  const anthropic = await import(source('src/providers/anthropic/anthropic-messages-language-model.ts'));
  const pipeline = await import(source('bench/support/in-process-pipeline.ts'));
  // An upstream client that answers every POST at once with the canned stream (no socket).
  const client = (bytes: Buffer) => ({
    postJson: () => Promise.resolve({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: UpstreamBody.of(bytes) }),
    sanitizer: (message: string) => message,
    transportError: (error: unknown) => error,
    readErrorText: () => Promise.resolve(''),
  });
  const request = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] };
  const read = (model: StreamingModel) => async (): Promise<number> => {
    let parts = 0;
    for await (const batch of model.stream(request, { signal: new AbortController().signal }).batches()) parts += batch.length;
    return parts;
  };
  const cases: Case[] = [
    {
      name: 'provider read, OpenAI-compatible',
      run: read(new openAI.OpenAICompatibleChatLanguageModel(client(openAIStream), { headers: {}, upstreamModel: 'bench-model' })),
    },
    {
      name: 'provider read, Anthropic',
      run: read(
        new anthropic.AnthropicMessagesLanguageModel(client(anthropicStream), {
          headers: {},
          upstreamModel: 'claude',
          defaultMaxOutputTokens: 64,
        }),
      ),
    },
  ];
  for (const stream of withJson ? [true, false] : [true])
    for (const testCase of GENERATION_CASES) {
      const body = testCase.body(stream);
      cases.push({
        name: `pipeline, ${testCase.format}, ${stream ? 'stream' : 'JSON'}`,
        run: () => pipeline.throughPipeline(pipeline.ENDPOINTS[testCase.path], body),
      });
    }
  return { cases, close: () => pipeline.closePipeline() };
}

const base = await casesOf(baseCheckout);
const current = await casesOf(thisCheckout);
// Warm-up: the JIT settles on both before the first pair.
for (const build of [base, current]) for (const testCase of build.cases) for (let index = 0; index < 3000; index++) await testCase.run();

const figures = base.cases.map(() => ({ base: [] as number[], current: [] as number[], ratios: [] as number[] }));
for (let round = 0; round < rounds; round++)
  for (const [index, figure] of figures.entries()) {
    const measure = (build: typeof base) => cpuMicrosecondsPerCall(build.cases[index]!.run, calls, 50);
    let baseFigure: number;
    let currentFigure: number;
    if (round % 2 === 0) {
      baseFigure = await measure(base);
      currentFigure = await measure(current);
    } else {
      currentFigure = await measure(current);
      baseFigure = await measure(base);
    }
    figure.base.push(baseFigure);
    figure.current.push(currentFigure);
    figure.ratios.push(currentFigure / baseFigure);
  }

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

console.log(`Streamed path, this checkout against ${baseCheckout}: CPU µs per call, ${calls} calls per run, ${rounds} pairs`);
console.log('| case | base (median) | this (median) | this / base (median of pairs) | pair range |');
console.log('|---|---:|---:|---:|---:|');
for (const [index, figure] of figures.entries())
  console.log(
    `| ${base.cases[index]!.name} | ${median(figure.base).toFixed(1)} | ${median(figure.current).toFixed(1)} | ${median(figure.ratios).toFixed(3)} | ${Math.min(...figure.ratios).toFixed(3)}-${Math.max(...figure.ratios).toFixed(3)} |`,
  );
await base.close();
await current.close();
