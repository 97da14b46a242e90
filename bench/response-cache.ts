/**
 * What a response-cache hit costs in latency (issue 38): p50 and p99 of sequential JSON chat requests
 * over a real socket (one connection, one request at a time), in interleaved rounds, for
 *
 * - `live`: a caller without the cache, answered by the mock upstream (in this process, canned answer);
 * - `same bytes`: the bytes of the cached answer served by a route behind Switchyard's edge (auth, the
 *   request admission, `_metadata`), without the cache: the baseline a hit is compared with;
 * - `hit, in-process`: a hit from the in-process LRU tier;
 * - `hit, shared store`: a hit read from Redis every time (a second runtime whose in-process tier holds
 *   nothing), when REDIS_URL is set (keys under a prefix of this run's own).
 *
 *   REDIS_URL=redis://127.0.0.1:6379 node --import tsx bench/response-cache.ts [requests per round] [rounds]
 *
 * The figures are printed, never asserted (README "Benchmarks"). The targets: a hit at most
 * 1 ms (in-process) and 2 ms (shared store) above `same bytes` at p99.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Pool } from 'undici';
import { cannedChatAnswer } from './support/canned-chat-answer.ts';
import { loadConfig, type ConfigInput } from '../src/config/index.ts';
import { randomHex } from '../src/core/ids.ts';
import { openAIChatFormat } from '../src/formats/openai-chat/openai-chat-format.ts';
import { startRuntime, type Runtime } from '../src/runtime.ts';

const requestsPerRound = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 5);
const redisUrl = process.env['REDIS_URL'];
const CACHED_ORGANIZATION = 'org-cached';

const { completion } = cannedChatAnswer(40, Math.floor(Date.now() / 1000));
const upstream = createServer((request, response) => {
  request.resume();
  request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(completion));
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamAddress = upstream.address();
if (upstreamAddress === null || typeof upstreamAddress === 'string') throw new Error('no upstream address');
const upstreamPort = upstreamAddress.port;

let sameBytes = '';
const directories: string[] = [];
const prefix = `bench-cache-${randomHex(8)}:`;

async function start(overrides: ConfigInput): Promise<{ runtime: Runtime; pool: Pool; cachedKey: string; liveKey: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-cache-'));
  directories.push(dataDir);
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir,
      logLevel: 'silent',
      bootstrapKey: false,
      server: { port: 0, host: '127.0.0.1' },
      providers: { up: { kind: 'openai-compatible', baseUrl: `http://127.0.0.1:${upstreamPort}/v1`, maxRetries: 0 } },
      models: [{ id: 'bench-model', provider: 'up', capabilities: ['chat'] }],
      ...overrides,
    },
  });
  const runtime = await startRuntime(config, {
    logger: pino({ level: 'silent' }),
    batchWorker: false,
    extraRoutes: (app, tools) => {
      const settings = {
        config: { switchyard: { permission: 'chat.completions' as const, limits: 'request' as const, format: openAIChatFormat } },
      };
      // A fresh object each time: the edge adds `_metadata` in place, as it does to a hit's body.
      // Admitted like a routed request (one request against the key's limits), as it was by the edge before.
      app.post('/bench/same-bytes', settings, async (request, reply) =>
        reply.sendAnswer(await tools.answerRequest(request, async () => JSON.parse(sameBytes) as Record<string, unknown>)),
      );
    },
  });
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const address = runtime.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const cachedKey = (await runtime.keys.create({ tier: 'Developer', name: 'cached', organization: CACHED_ORGANIZATION })).key;
  const liveKey = (await runtime.keys.create({ tier: 'Developer', name: 'live' })).key;
  return { runtime, pool: new Pool(`http://127.0.0.1:${address.port}`, { connections: 1 }), cachedKey, liveKey };
}

const body = JSON.stringify({ model: 'bench-model', temperature: 0, messages: [{ role: 'user', content: 'What is cached?' }] });
const cacheSettings = { organizations: { [CACHED_ORGANIZATION]: { enabled: true, shareAcrossKeys: true } } };
const unlimited = {
  tiers: {
    Developer: {
      requestsPerMinute: 0,
      tokensPerMinute: 0,
      tokensPerDay: 0,
      tokensPerMonth: 0,
      concurrentBatches: 1,
      permissions: ['chat.completions' as const],
    },
  },
};

const inProcess = await start({ ...unlimited, responseCache: { ...cacheSettings, store: 'memory' } });
const shared =
  redisUrl === undefined
    ? undefined
    : await start({ ...unlimited, redisUrl, redisPrefix: prefix, responseCache: { ...cacheSettings, store: 'redis', memoryBytes: 1 } });

async function post(pool: Pool, path: string, key: string): Promise<{ text: string; cacheStatus: string | undefined }> {
  const response = await pool.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${text}`);
  const status = response.headers['cache-status'];
  return { text, cacheStatus: typeof status === 'string' ? status : undefined };
}

// Fill the cache, and keep the hit's bytes (without `_metadata`) for the baseline.
const first = await post(inProcess.pool, '/v1/chat/completions', inProcess.cachedKey);
const hitAnswer = JSON.parse((await post(inProcess.pool, '/v1/chat/completions', inProcess.cachedKey)).text) as Record<string, unknown>;
delete hitAnswer['_metadata'];
sameBytes = JSON.stringify(hitAnswer);
if (shared !== undefined) await post(shared.pool, '/v1/chat/completions', shared.cachedKey);
void first;

type Case = { name: string; call: () => Promise<unknown>; expect?: RegExp };
const cases: Case[] = [
  { name: 'live (mock upstream)', call: () => post(inProcess.pool, '/v1/chat/completions', inProcess.liveKey) },
  { name: 'same bytes, no cache', call: () => post(inProcess.pool, '/bench/same-bytes', inProcess.liveKey) },
  { name: 'hit, in-process tier', call: () => post(inProcess.pool, '/v1/chat/completions', inProcess.cachedKey), expect: /hit/ },
];
if (shared !== undefined) {
  cases.push({ name: 'same bytes (2nd runtime)', call: () => post(shared.pool, '/bench/same-bytes', shared.liveKey) });
  cases.push({ name: 'hit, shared store (Redis)', call: () => post(shared.pool, '/v1/chat/completions', shared.cachedKey), expect: /hit/ });
}

const samples = new Map<string, number[]>(cases.map((entry) => [entry.name, []]));
for (const entry of cases) {
  const result = (await entry.call()) as { cacheStatus?: string };
  if (entry.expect !== undefined && !entry.expect.test(result.cacheStatus ?? ''))
    throw new Error(`${entry.name}: Cache-Status ${result.cacheStatus}`);
  for (let index = 0; index < 300; index++) await entry.call(); // warm-up
}
for (let round = 0; round < rounds; round++) {
  for (const entry of cases) {
    const times = samples.get(entry.name)!;
    for (let index = 0; index < requestsPerRound; index++) {
      const started = process.hrtime.bigint();
      await entry.call();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

console.log(`${rounds} rounds x ${requestsPerRound} sequential requests per case, one connection (ms)`);
console.log(`${'case'.padEnd(28)} ${'p50'.padStart(7)} ${'p99'.padStart(7)}`);
const p99 = new Map<string, number>();
for (const [name, times] of samples) {
  p99.set(name, percentile(times, 0.99));
  console.log(`${name.padEnd(28)} ${percentile(times, 0.5).toFixed(3).padStart(7)} ${percentile(times, 0.99).toFixed(3).padStart(7)}`);
}
const added = (hit: string, baseline: string) => (p99.get(hit)! - p99.get(baseline)!).toFixed(3);
console.log(`hit (in-process) p99 - same bytes p99: ${added('hit, in-process tier', 'same bytes, no cache')} ms (target <= 1 ms)`);
if (shared !== undefined)
  console.log(
    `hit (shared store) p99 - same bytes p99: ${added('hit, shared store (Redis)', 'same bytes (2nd runtime)')} ms (target <= 2 ms)`,
  );
else console.log('shared store: skipped (set REDIS_URL)');

for (const started of [inProcess, shared]) {
  if (started === undefined) continue;
  await started.runtime.responseCache.purge(CACHED_ORGANIZATION);
  await started.pool.close();
  await started.runtime.close();
}
upstream.close();
for (const directory of directories) rmSync(directory, { recursive: true, force: true });
