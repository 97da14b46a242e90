/**
 * What the shared gateway bench's configuration costs a JSON chat request beside gateway-chat.ts's, in
 * one process (app.inject(), as bench/gateway-in-process.ts; no sockets, so the figure moves least on a
 * loaded machine): one runtime, two keys, one on the Enterprise tier (every limit 0: nothing counted, no
 * rate-limit headers) and one on a tier with finite limits (requests and tokens per minute, tokens per day
 * and per month: every window counted, six x-ratelimit-* headers written), each with gateway-chat.ts's
 * short body and the shared bench's longer one. Interleaved rounds, the median CPU µs per request of each
 * and its ratio to the Enterprise/short row of the same round.
 *
 *   node --import tsx bench/tier-cost.ts [requests per run] [rounds]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { cpuMicrosecondsPerCall } from './support/cpu-per-request.ts';
import { mockUpstreamConfig } from './support/mock-upstream-config.ts';
import { runPinnedTo, startProcess } from './support/processes.ts';
import { loadConfig } from '../src/config/index.ts';
import { startRuntime } from '../src/runtime.ts';

runPinnedTo(0);
const requestsPerRun = Number(process.argv[2] ?? 5000);
const rounds = Number(process.argv[3] ?? 5);
const UPSTREAM_PORT = 18_455;
const upstreamOrigin = `http://127.0.0.1:${UPSTREAM_PORT}`;

const base = mockUpstreamConfig(upstreamOrigin);
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: mkdtempSync(join(tmpdir(), 'switchyard-bench-tier-cost-')),
    logLevel: 'silent',
    bootstrapKey: false,
    limitsBackend: 'memory',
    ...base,
    tiers: {
      // A default tier with the shared bench's figures (a key's tier must be one its organization's plan allows).
      Production: {
        requestsPerMinute: 100_000_000,
        tokensPerMinute: 1_000_000_000,
        tokensPerDay: 100_000_000_000,
        tokensPerMonth: 1_000_000_000_000,
        concurrentBatches: 5,
      },
    },
  },
});
const upstream = await startProcess('bench/support/mock-openai-upstream.ts', [String(UPSTREAM_PORT), '20'], {}, /listening/, 1);
const runtime = await startRuntime(config, { logger: pino({ level: 'silent' }) });
const SHORT = JSON.stringify({
  model: 'bench-model',
  max_tokens: 64,
  stream: false,
  messages: [{ role: 'user', content: 'Say hello in twenty words.' }],
});
const SHARED = JSON.stringify({
  model: 'bench-model',
  messages: [{ role: 'user', content: 'Hello there, how are you doing today? Tell me a story about a cat.' }],
  max_tokens: 64,
});
try {
  await runtime.app.ready();
  const enterprise = (await runtime.keys.create({ tier: 'Enterprise', name: 'enterprise' })).key;
  const finite = (await runtime.keys.create({ tier: 'Production', name: 'finite limits' })).key;
  const rows: Array<{ label: string; key: string; body: string; runs: number[] }> = [
    { label: 'Enterprise tier (nothing counted), short body', key: enterprise, body: SHORT, runs: [] },
    { label: 'finite-limit tier, short body', key: finite, body: SHORT, runs: [] },
    { label: 'Enterprise tier, shared bench body', key: enterprise, body: SHARED, runs: [] },
    { label: 'finite-limit tier, shared bench body', key: finite, body: SHARED, runs: [] },
  ];
  const call = (row: (typeof rows)[number]) => async (): Promise<void> => {
    const response = await runtime.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer ${row.key}`, 'content-type': 'application/json' },
      payload: row.body,
    });
    if (response.statusCode !== 200) throw new Error(`answered ${response.statusCode}: ${response.body}`);
  };
  for (const row of rows) await cpuMicrosecondsPerCall(call(row), Math.min(3000, requestsPerRun));
  for (let round = 0; round < rounds; round++)
    for (const row of rows) row.runs.push(await cpuMicrosecondsPerCall(call(row), requestsPerRun));
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log('\n| JSON chat, in process, 50 in flight | CPU µs/req (median) | / Enterprise, short body (same round) | every run |');
  console.log('|---|---:|---:|---|');
  for (const row of rows) {
    const ratio = median(row.runs.map((run, round) => run / rows[0]!.runs[round]!));
    console.log(
      `| ${row.label} | ${median(row.runs).toFixed(1)} | ${ratio.toFixed(3)}x | ${row.runs.map((run) => run.toFixed(0)).join(', ')} |`,
    );
  }
} finally {
  await runtime.close();
  await upstream.stop();
}
