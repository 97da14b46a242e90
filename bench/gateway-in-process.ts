/**
 * The gateway's CPU per request, measured in one process and steady enough to compare small changes:
 * the real runtime (startRuntime: auth, limits in memory, metering to SQLite, the whole generation
 * pipeline, the real undici client) answers `app.inject()` calls, 50 in flight, while the mock
 * upstream runs in its own process on the other core. No listening socket, so none of the client-side
 * network noise that moves bench/gateway-chat.ts by ±10% between identical runs on this machine; here
 * repeated runs agree within about 1-2%. Beside it, in the same run: a bare Fastify app answering the
 * same inject() calls by passing the body through to the same upstream with undici (the pass-through
 * proxy's work, without its socket). Each row is the median of 3 runs, every run in brackets.
 *
 *   node --import tsx bench/gateway-in-process.ts [requests per run]
 *
 * Then where a JSON chat request's CPU goes, layer by layer, in interleaved rounds (each figure the
 * median of 5): a bare Fastify app answering a canned completion; the same canned answer behind
 * Switchyard's edge (a route added to the real app with `extraRoutes` and the chat route's config:
 * request id, auth, hooks, `_metadata`, metrics); the whole request; the pass-through. Edge = second -
 * first, the upstream call = pass-through - first, and the generation pipeline (decode, resolve,
 * count, admit, provider, service, cap, meter, encode, settle) = whole - second - upstream call. The
 * differences are of figures that each move by ~10% on this machine: read them to a few tens of µs.
 * The inject artefact below falls on the whole request only, so it is counted in the pipeline's row.
 *
 * Profile with `node --cpu-prof --import tsx bench/gateway-in-process.ts`. One caveat: inject's fake
 * response never reports `writableFinished`, so the edge takes every request for one whose client left
 * and aborts its cancellation after the answer (a DOMException per request; ~5% of the figure when
 * it was an AbortController) that a request served through a socket does not pay. It is the same in every run, so differences hold.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Pool } from 'undici';
import { cannedChatAnswer } from './support/canned-chat-answer.ts';
import { cpuMicrosecondsPerCall } from './support/cpu-per-request.ts';
import { GENERATION_CASES } from './support/generation-cases.ts';
import { mockUpstreamConfig } from './support/mock-upstream-config.ts';
import { runPinnedTo, startProcess } from './support/processes.ts';
import { loadConfig } from '../src/config/index.ts';
import { openAIChatFormat } from '../src/formats/openai-chat/openai-chat-format.ts';
import { startRuntime } from '../src/runtime.ts';

const GATEWAY_CORE = 0;
const UPSTREAM_CORE = 1;
runPinnedTo(GATEWAY_CORE);

const requestsPerRun = Number(process.argv[2] ?? 10_000);
const CONCURRENCY = 50;
const LAYER_ROUNDS = 5;
const UPSTREAM_PORT = 18_450;
const upstreamOrigin = `http://127.0.0.1:${UPSTREAM_PORT}`;

/** Warm-up, then 3 runs: the median and every run. */
async function rounds(call: () => Promise<void>): Promise<{ median: number; runs: number[] }> {
  await cpuMicrosecondsPerCall(call, Math.min(3000, requestsPerRun), CONCURRENCY);
  const runs: number[] = [];
  for (let run = 0; run < 3; run++) runs.push(await cpuMicrosecondsPerCall(call, requestsPerRun, CONCURRENCY));
  return { median: [...runs].sort((left, right) => left - right)[1]!, runs };
}

function injector(app: FastifyInstance, path: string, body: string, headers: Record<string, string>): () => Promise<void> {
  return async () => {
    const response = await app.inject({ method: 'POST', url: path, headers, payload: body });
    if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}: ${response.body}`);
  };
}

const upstream = await startProcess('bench/support/mock-openai-upstream.ts', [String(UPSTREAM_PORT), '20'], {}, /listening/, UPSTREAM_CORE);
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: mkdtempSync(join(tmpdir(), 'switchyard-bench-in-process-')),
    logLevel: 'silent',
    bootstrapKey: false,
    limitsBackend: 'memory',
    ...mockUpstreamConfig(upstreamOrigin),
  },
});
const pool = new Pool(upstreamOrigin);
const proxy = Fastify();
proxy.removeContentTypeParser('application/json');
proxy.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
proxy.post('/v1/chat/completions', async (request, reply) => {
  const answer = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body: request.body as Buffer,
  });
  return reply.code(answer.statusCode).header('content-type', answer.headers['content-type']).send(answer.body);
});
/** The mock upstream's own completion (support/canned-chat-answer.ts), answered without any upstream call. */
const cannedCompletionText = cannedChatAnswer(20, 0).completion;
/** A fresh object per answer: `reply.sendData` adds `_metadata` to the body it is given. */
function cannedCompletion(): Record<string, unknown> {
  return JSON.parse(cannedCompletionText) as Record<string, unknown>;
}

// The layer routes: behind the real edge with the chat route's configuration, answering a canned completion.
const chatRouteConfig = {
  config: { switchyard: { permission: 'chat.completions' as const, limits: 'tokens' as const, format: openAIChatFormat } },
};
const runtime = await startRuntime(config, {
  logger: pino({ level: 'silent' }),
  extraRoutes: (app) => {
    app.post('/bench/edge', chatRouteConfig, async (_request, reply) => reply.sendData(cannedCompletion()));
  },
});
const canned = Fastify();
canned.post('/v1/chat/completions', async () => cannedCompletion());

/** Every layer of a JSON chat request, measured in interleaved rounds: median per layer. */
async function layers(headers: Record<string, string>): Promise<Record<string, number>> {
  const body = GENERATION_CASES[0]!.body(false);
  const calls: Record<string, () => Promise<void>> = {
    canned: injector(canned, '/v1/chat/completions', body, headers),
    edge: injector(runtime.app, '/bench/edge', body, headers),
    whole: injector(runtime.app, '/v1/chat/completions', body, headers),
    passThrough: injector(proxy, '/v1/chat/completions', body, headers),
  };
  const figures: Record<string, number[]> = {};
  for (const call of Object.values(calls)) await cpuMicrosecondsPerCall(call, Math.min(3000, requestsPerRun), CONCURRENCY);
  for (let round = 0; round < LAYER_ROUNDS; round++) {
    for (const [name, call] of Object.entries(calls))
      (figures[name] ??= []).push(await cpuMicrosecondsPerCall(call, requestsPerRun, CONCURRENCY));
  }
  return Object.fromEntries(
    Object.entries(figures).map(([name, runs]) => [name, [...runs].sort((left, right) => left - right)[Math.floor(LAYER_ROUNDS / 2)]!]),
  );
}

try {
  await runtime.app.ready();
  await canned.ready();
  await proxy.ready();
  const { key } = await runtime.keys.create({ tier: 'Enterprise', name: 'bench' });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const rows: string[] = [];
  for (const stream of [false, true]) {
    const baseline = await rounds(injector(proxy, '/v1/chat/completions', GENERATION_CASES[0]!.body(stream), headers));
    for (const testCase of GENERATION_CASES) {
      const gateway = await rounds(injector(runtime.app, testCase.path, testCase.body(stream), headers));
      const runs = (figures: number[]): string => figures.map((figure) => figure.toFixed(0)).join(', ');
      rows.push(
        `| ${testCase.format}, ${stream ? 'stream' : 'JSON'} | ${baseline.median.toFixed(0)} [${runs(baseline.runs)}] | ${gateway.median.toFixed(0)} [${runs(gateway.runs)}] | ${(baseline.median / gateway.median).toFixed(2)} |`,
      );
    }
  }
  console.log(
    `\nIn process (app.inject), ${CONCURRENCY} in flight, ${requestsPerRun} requests per run, CPU µs per request: median [3 runs]`,
  );
  console.log('| path | pass-through (bare Fastify + undici) | switchyard | ratio |');
  console.log('|---|---:|---:|---:|');
  for (const row of rows) console.log(row);

  const layer = await layers(headers);
  const upstreamCall = layer['passThrough']! - layer['canned']!;
  const pipeline = layer['whole']! - layer['edge']! - upstreamCall;
  console.log(
    `\nA JSON chat request layer by layer, CPU µs per request (median of ${LAYER_ROUNDS} interleaved rounds of ${requestsPerRun})`,
  );
  console.log('| layer | µs | measured as |');
  console.log('|---|---:|---|');
  const layerRow = (name: string, figure: number, how: string): void => console.log(`| ${name} | ${figure.toFixed(0)} | ${how} |`);
  layerRow('bare Fastify, canned answer', layer['canned']!, 'a bare app answering a canned completion');
  layerRow('Switchyard edge', layer['edge']! - layer['canned']!, "canned answer behind the chat route's edge, minus the bare app");
  layerRow('the upstream call', upstreamCall, 'pass-through minus the bare app');
  layerRow('the generation pipeline', pipeline, 'whole request minus the edge route, minus the upstream call');
  layerRow(
    'whole request',
    layer['whole']!,
    `pass-through: ${layer['passThrough']!.toFixed(0)} (ratio ${(layer['passThrough']! / layer['whole']!).toFixed(2)})`,
  );
} finally {
  await canned.close();
  await proxy.close();
  await pool.close();
  await runtime.close();
  await upstream.stop();
}
