/**
 * Batch engine throughput: a real server (SQLite, local-disk files, the batch worker), a JSONL of
 * `BENCH_LINES` chat lines for the built-in `switchyard-echo` model uploaded with the openai SDK, and
 * the time each phase takes (validation, execution, finalisation), read from the batch's own
 * millisecond timestamps. Lines run through the real /v1/chat/completions route in-process, so this
 * is the cost of a batch line on top of a synchronous request. Figures are printed, never asserted.
 *
 * Run: node --import tsx bench/batches.ts        (BENCH_LINES=2000 BENCH_CONCURRENCY=8 to change)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { loadConfig } from '../src/config/index.ts';
import { startRuntime } from '../src/runtime.ts';

const LINES = Number(process.env.BENCH_LINES ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);

const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-batches-'));
const config = loadConfig({
  env: {},
  overrides: { dataDir, logLevel: 'silent', bootstrapKey: false, server: { port: 0, host: '127.0.0.1' } },
});
const runtime = await startRuntime(config, { batchWorker: { concurrency: CONCURRENCY, pollIntervalMs: 50 } });
try {
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const address = runtime.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const { key } = await runtime.keys.create({ tier: 'Enterprise', name: 'bench' });
  const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${address.port}/v1`, maxRetries: 0 });

  const lines = Array.from({ length: LINES }, (_, index) =>
    JSON.stringify({
      custom_id: `request-${index}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: {
        model: 'switchyard-echo',
        messages: [{ role: 'user', content: `Question number ${index}: what is the weather like today?` }],
        max_tokens: 64,
      },
    }),
  );
  const input = await client.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'bench.jsonl'), purpose: 'batch' });
  const started = performance.now();
  const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  let status = created.status;
  while (status !== 'completed' && status !== 'failed') {
    await new Promise((resolve) => setTimeout(resolve, 50));
    status = (await client.batches.retrieve(created.id)).status;
  }
  const wallSeconds = (performance.now() - started) / 1000;
  const record = (await runtime.database.db
    .selectFrom('batches')
    .selectAll()
    .where('id', '=', created.id)
    .executeTakeFirstOrThrow()) as Record<string, number | string>;
  const at = (field: string): number => Number(record[field]);
  const output = await (await client.files.content(String(record['output_file_id']))).text();
  const outputLines = output.split('\n').filter((line) => line !== '').length;
  const executionSeconds = (at('finalizing_at') - at('in_progress_at')) / 1000;
  console.log(
    `batch engine benchmark: ${LINES} chat lines (switchyard-echo), ${CONCURRENCY} lines in flight, SQLite, node ${process.version}`,
  );
  console.log(
    `status ${status}, ${record['completed']} completed, ${record['failed']} failed, ${outputLines} output lines (${(output.length / 1024).toFixed(0)} KiB)`,
  );
  console.log(`validation   ${(at('in_progress_at') - at('created_at')).toString().padStart(6)} ms`);
  console.log(
    `execution    ${(at('finalizing_at') - at('in_progress_at')).toString().padStart(6)} ms  (${Math.round(LINES / executionSeconds).toLocaleString('en-US')} lines/s)`,
  );
  console.log(`finalizing   ${(at('completed_at') - at('finalizing_at')).toString().padStart(6)} ms`);
  console.log(`create -> completed seen by polling: ${wallSeconds.toFixed(2)} s`);
} finally {
  await runtime.close();
  rmSync(dataDir, { recursive: true, force: true });
}
