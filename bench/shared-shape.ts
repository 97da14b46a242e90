/**
 * The shared gateway bench's scenario (the second bench issue 41 names), run from this checkout with the
 * project's own parts, beside the shape `bench/gateway-chat.ts` measures, so that the two can be compared
 * in one run and on one machine: CPU per chat request of Switchyard as a multiple of a baseline proxy's.
 *
 * The shared bench differs from gateway-chat.ts in: its baseline (a proxy that checks a key, parses and
 * re-encodes the JSON both ways: support/reencoding-proxy.ts; gateway-chat.ts's is a pass-through that
 * parses nothing), its configuration (a tier with finite limits, so every limit window is counted, a
 * provider with retries and an upstream key; gateway-chat.ts uses the Enterprise tier, where nothing is
 * counted), its request body (a longer prompt), and its streams. This bench runs every Switchyard variant
 * and both baselines interleaved, each round in the same order, and prints the median of the rounds.
 * The gateways run pinned to core 0, the mock upstream and the load (this process) on core 1.
 *
 *   node --import tsx bench/shared-shape.ts [seconds] [--rounds N] [--warm S] [--stream] [--tracing] [--tier-swap]
 *
 * `--stream` loads streamed chat (20 chunks) instead of JSON. `--tracing` adds a Switchyard with the
 * shared configuration and every request traced to a local OTLP/HTTP sink (support/otlp-sink.ts).
 * `--tier-swap` adds a Switchyard with the shared configuration but the Enterprise tier as its default.
 * `--base <checkout>` adds the shared configuration and body served by another checkout's build (built
 * there with `npm run build`), e.g. the commit before a change, and prints this build over it per round.
 */
import { printTable, runLoad, type LoadResult } from './support/load.ts';
import { mockUpstreamConfig } from './support/mock-upstream-config.ts';
import { runPinnedTo, startProcess, startSwitchyard, type RunningProcess } from './support/processes.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedBenchConfig } from './support/shared-bench-config.ts';

runPinnedTo(1);

const roundsFlag = process.argv.indexOf('--rounds');
const rounds = roundsFlag === -1 ? 3 : Math.max(1, Number(process.argv[roundsFlag + 1]));
const stream = process.argv.includes('--stream');
const warmFlag = process.argv.indexOf('--warm');
const baseFlag = process.argv.indexOf('--base');
const baseCheckout = baseFlag === -1 ? undefined : process.argv[baseFlag + 1];
/** Seconds of load on each server before the first measured run (`--warm S`, default 8): Switchyard's JIT settles in ~10 s of full load. */
const warmSeconds = warmFlag === -1 ? 8 : Number(process.argv[warmFlag + 1]);
const durationSeconds = Number(
  process.argv.find(
    (argument, index) => /^\d+$/.test(argument) && index !== roundsFlag + 1 && index !== warmFlag + 1 && index !== baseFlag + 1,
  ) ?? 5,
);
const withTracing = process.argv.includes('--tracing');
const tierSwap = process.argv.includes('--tier-swap');
/** `BENCH_PORT_OFFSET=N` moves every port by N, so that two checkouts can run this bench at once. */
const PORT_OFFSET = Number(process.env['BENCH_PORT_OFFSET'] ?? 0);
const UPSTREAM_PORT = 18_440 + PORT_OFFSET;
const REENCODING_PORT = 18_441 + PORT_OFFSET;
const PASSTHROUGH_PORT = 18_442 + PORT_OFFSET;
const SINK_PORT = 18_443 + PORT_OFFSET;
const GATEWAY_CORE = 0;
const LOAD_CORE = 1;
const PROXY_KEY = 'sk-bench';
const upstreamOrigin = `http://127.0.0.1:${UPSTREAM_PORT}`;

/** The shared bench's configuration: one tier with finite (unreachable) limits, retries on. */
const sharedConfig = sharedBenchConfig(upstreamOrigin);

function writeConfig(config: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'switchyard-shared-shape-')), 'config.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

const SHORT_BODY = { model: 'bench-model', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello in twenty words.' }] };
const SHARED_BODY = {
  model: 'bench-model',
  messages: [{ role: 'user', content: 'Hello there, how are you doing today? Tell me a story about a cat.' }],
  max_tokens: 64,
};
const body = (shape: object): string => JSON.stringify(stream ? { ...shape, stream: true } : shape);

interface Target {
  label: string;
  url: string;
  body: string;
  headers: Record<string, string>;
  pid: () => number;
  runs: LoadResult[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const started: RunningProcess[] = [];
try {
  started.push(await startProcess('bench/support/mock-openai-upstream.ts', [String(UPSTREAM_PORT), '20'], {}, /listening/, LOAD_CORE));
  const reencoding = await startProcess(
    'bench/support/reencoding-proxy.ts',
    [String(REENCODING_PORT), upstreamOrigin, PROXY_KEY],
    {},
    /listening/,
    GATEWAY_CORE,
  );
  const passthrough = await startProcess(
    'bench/support/passthrough-proxy.ts',
    [String(PASSTHROUGH_PORT), upstreamOrigin],
    {},
    /listening/,
    GATEWAY_CORE,
  );
  started.push(reencoding, passthrough);
  const untraced = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' };
  const enterprise = await startSwitchyard(
    { SWITCHYARD_CONFIG: writeConfig(mockUpstreamConfig(upstreamOrigin)), ...untraced },
    18_444 + PORT_OFFSET,
    GATEWAY_CORE,
  );
  const sharedFile = writeConfig(sharedConfig);
  const shared = await startSwitchyard({ SWITCHYARD_CONFIG: sharedFile, ...untraced }, 18_445 + PORT_OFFSET, GATEWAY_CORE);
  started.push(enterprise, shared);
  // `--tier-swap`: the shared configuration with the Enterprise tier as the default (nothing counted).
  const swapped = tierSwap
    ? await startSwitchyard(
        { SWITCHYARD_CONFIG: writeConfig({ ...sharedConfig, defaultTier: 'Enterprise' }), ...untraced },
        18_447 + PORT_OFFSET,
        GATEWAY_CORE,
      )
    : undefined;
  if (swapped !== undefined) started.push(swapped);
  // `--base <checkout>`: the same configuration served by another build.
  const base =
    baseCheckout === undefined
      ? undefined
      : await startSwitchyard({ SWITCHYARD_CONFIG: sharedFile, ...untraced }, 18_448 + PORT_OFFSET, GATEWAY_CORE, baseCheckout);
  if (base !== undefined) started.push(base);
  const sink = withTracing ? await startProcess('bench/support/otlp-sink.ts', [String(SINK_PORT)], {}, /listening/, LOAD_CORE) : undefined;
  const traced = withTracing
    ? await startSwitchyard(
        { SWITCHYARD_CONFIG: sharedFile, ...untraced, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${SINK_PORT}` },
        18_446 + PORT_OFFSET,
        GATEWAY_CORE,
      )
    : undefined;
  if (sink !== undefined) started.push(sink);
  if (traced !== undefined) started.push(traced);

  const json = { 'content-type': 'application/json' };
  const path = '/v1/chat/completions';
  const targets: Target[] = [
    {
      label: 'pass-through proxy, short body',
      url: `http://127.0.0.1:${PASSTHROUGH_PORT}${path}`,
      body: body(SHORT_BODY),
      headers: json,
      pid: () => passthrough.child.pid!,
      runs: [],
    },
    {
      label: 're-encoding proxy, shared body',
      url: `http://127.0.0.1:${REENCODING_PORT}${path}`,
      body: body(SHARED_BODY),
      headers: { ...json, authorization: `Bearer ${PROXY_KEY}` },
      pid: () => reencoding.child.pid!,
      runs: [],
    },
    {
      label: 'switchyard, Enterprise config, short body',
      url: `${enterprise.origin}${path}`,
      body: body(SHORT_BODY),
      headers: { ...json, authorization: `Bearer ${enterprise.key}` },
      pid: () => enterprise.child.pid!,
      runs: [],
    },
    {
      label: 'switchyard, shared config, short body',
      url: `${shared.origin}${path}`,
      body: body(SHORT_BODY),
      headers: { ...json, authorization: `Bearer ${shared.key}` },
      pid: () => shared.child.pid!,
      runs: [],
    },
    {
      label: 'switchyard, shared config, shared body',
      url: `${shared.origin}${path}`,
      body: body(SHARED_BODY),
      headers: { ...json, authorization: `Bearer ${shared.key}` },
      pid: () => shared.child.pid!,
      runs: [],
    },
  ];
  if (swapped !== undefined)
    targets.push({
      label: 'switchyard, shared config on the Enterprise tier, shared body',
      url: `${swapped.origin}${path}`,
      body: body(SHARED_BODY),
      headers: { ...json, authorization: `Bearer ${swapped.key}` },
      pid: () => swapped.child.pid!,
      runs: [],
    });
  if (base !== undefined)
    targets.push({
      label: `switchyard at ${baseCheckout}, shared config, shared body`,
      url: `${base.origin}${path}`,
      body: body(SHARED_BODY),
      headers: { ...json, authorization: `Bearer ${base.key}` },
      pid: () => base.child.pid!,
      runs: [],
    });
  if (traced !== undefined)
    targets.push({
      label: 'switchyard traced, shared config, shared body',
      url: `${traced.origin}${path}`,
      body: body(SHARED_BODY),
      headers: { ...json, authorization: `Bearer ${traced.key}` },
      pid: () => traced.child.pid!,
      runs: [],
    });
  // Steady state: each server loaded before the first measured run (Switchyard's JIT settles in ~10 s).
  for (const target of targets)
    await runLoad('warm-up', { url: target.url, method: 'POST', headers: target.headers, body: target.body, durationSeconds: warmSeconds });
  for (let round = 1; round <= rounds; round++) {
    for (const target of targets) {
      await runLoad('warm-up', { url: target.url, method: 'POST', headers: target.headers, body: target.body, durationSeconds: 1 });
      const result = await runLoad(`${target.label} (round ${round})`, {
        url: target.url,
        method: 'POST',
        headers: target.headers,
        body: target.body,
        durationSeconds,
        serverPid: target.pid(),
      });
      target.runs.push(result);
    }
  }
  printTable(
    `Chat ${stream ? 'streamed' : 'JSON'}, 50 connections, every run (loaded machine: compare CPU within a round)`,
    targets.flatMap((target) => target.runs),
  );
  // Ratios per round against each baseline in the same round, then the median over rounds.
  const cpu = (target: Target, round: number): number => target.runs[round]!.serverMicrosecondsPerRequest ?? Number.NaN;
  // Core share: requests/s x CPU per request, the part of its core the server used. Well under 1, the server
  // was under-loaded or starved, and its CPU per request is inflated (docs/performance.md, "Two benches").
  console.log(`\n| run | CPU µs/req (median) | core share (median) | / pass-through proxy | / re-encoding proxy |`);
  console.log('|---|---:|---:|---:|---:|');
  for (const target of targets) {
    const perRound = target.runs.map((_, round) => round);
    const own = median(perRound.map((round) => cpu(target, round)));
    const overPass = median(perRound.map((round) => cpu(target, round) / cpu(targets[0]!, round)));
    const overReencoding = median(perRound.map((round) => cpu(target, round) / cpu(targets[1]!, round)));
    const share = median(target.runs.map((run) => (run.requestsPerSecond * (run.serverMicrosecondsPerRequest ?? Number.NaN)) / 1e6));
    console.log(`| ${target.label} | ${own} | ${share.toFixed(2)} | ${overPass.toFixed(2)}x | ${overReencoding.toFixed(2)}x |`);
  }
  const baseRow = targets.find((target) => target.label.startsWith('switchyard at '));
  if (baseRow !== undefined) {
    const overBase = median(baseRow.runs.map((_, round) => cpu(targets[4]!, round) / cpu(baseRow, round)));
    console.log(`\nthis build over ${baseCheckout}: ${overBase.toFixed(3)}x its CPU per request (median of rounds)`);
  }
  if (traced !== undefined) {
    const tracedRow = targets.at(-1)!;
    const overUntraced = median(tracedRow.runs.map((_, round) => cpu(tracedRow, round) / cpu(targets[4]!, round)));
    console.log(`\ntracing every request: ${overUntraced.toFixed(3)}x the untraced CPU per request (median of rounds)`);
  }
} finally {
  for (const process of started.reverse()) await process.stop();
}
