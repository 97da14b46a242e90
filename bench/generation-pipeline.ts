/**
 * The generation pipeline alone, in one process, with no HTTP server and no sockets: a canned
 * OpenAI-compatible upstream answer (the same 20-delta answer bench/support/mock-openai-upstream.ts
 * sends, in one read) goes through decode, resolve, prompt count, admission, the provider's SSE parse and
 * mapping, the generation service, the output cap, the meter and the format's encoder, then the SSE
 * serialiser. Beside it, in the same run, the least any translating gateway must do with that answer:
 * JSON.parse every upstream chunk and JSON.stringify one event per chunk (the baseline). 50 requests in
 * flight, like the HTTP benchmark. CPU time per request is the figure (process.cpuUsage, this process only).
 *
 *   node --import tsx bench/generation-pipeline.ts [requests]
 *
 * Profile it with `node --cpu-prof --import tsx bench/generation-pipeline.ts`: without the HTTP layers
 * the pipeline's own costs stand out.
 */
import { cpuMicrosecondsPerCall } from './support/cpu-per-request.ts';
import { GENERATION_CASES } from './support/generation-cases.ts';
import { closePipeline, ENDPOINTS, throughBaseline, throughPipeline } from './support/in-process-pipeline.ts';

const requests = Number(process.argv[2] ?? 20_000);
const CONCURRENCY = 50;

/** CPU microseconds per request with CONCURRENCY requests in flight, after a warm-up that lets the JIT settle. */
async function measure(run: () => Promise<number>): Promise<number> {
  for (let index = 0; index < 2000; index++) await run();
  return cpuMicrosecondsPerCall(run, requests, CONCURRENCY);
}

console.log(`Generation pipeline in process, ${requests} requests per run, ${CONCURRENCY} in flight (CPU µs per request)`);
console.log('| path | baseline (parse + re-encode) | switchyard pipeline | ratio |');
console.log('|---|---:|---:|---:|');
for (const stream of [false, true]) {
  const baseline = await measure(() => throughBaseline(stream));
  for (const testCase of GENERATION_CASES) {
    const body = testCase.body(stream);
    const endpoint = ENDPOINTS[testCase.path];
    const pipeline = await measure(() => throughPipeline(endpoint, body));
    console.log(
      `| ${testCase.format}, ${stream ? 'stream' : 'JSON'} | ${baseline.toFixed(1)} | ${pipeline.toFixed(1)} | ${(pipeline / baseline).toFixed(1)}x |`,
    );
  }
}
await closePipeline();
process.exit(0);
