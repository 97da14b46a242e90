/**
 * What tracing costs (issue 41): chat JSON through three Switchyards started from this checkout with
 * the same configuration (the shared bench's: a tier with finite limits, every window counted), loaded
 * in interleaved rounds, so every ratio compares runs made within a minute of each other on the same
 * core:
 * - tracing off;
 * - every request sampled (the default sampler, `parentbased_always_on`) and exported over OTLP/HTTP
 *   protobuf (the default protocol) to a local sink that reads and discards (support/otlp-sink.ts);
 * - every request sampled, exported over OTLP/HTTP JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json);
 * - a tenth of the requests sampled (`parentbased_traceidratio`, 0.1), the same sink;
 * - tracing off again, a second server: the control, whose ratio to the first is the bench's own spread
 *   (two identical servers measured in turn).
 * Each round starts with the next server in turn, so whatever favours the first (or last) run of a round
 * falls on every server alike.
 * Prints the CPU per request of each, the traced / untraced ratio per round and its median, and the
 * target row (every request sampled: at most 1.15x). The gateways run pinned to core 0, the mock
 * upstream, the sink and the load (this process) on core 1.
 *
 *   node --import tsx bench/tracing.ts [seconds] [--rounds N] [--warm S] [--against DIR]
 *
 * `--against DIR` adds one more Switchyard, every request sampled, run from another checkout's build
 * (`npm run build` there first), e.g. the commit before a tracing change, to price it in the same run.
 *
 * BENCH_SERVER_FLAGS='--cpu-prof --cpu-prof-dir=prof' profiles the servers (processes.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printTable, runLoad, type LoadResult } from './support/load.ts';
import { peakResidentMegabytes, runPinnedTo, startProcess, startSwitchyard, type RunningProcess } from './support/processes.ts';
import { sharedBenchConfig } from './support/shared-bench-config.ts';

runPinnedTo(1);

const roundsFlag = process.argv.indexOf('--rounds');
const rounds = roundsFlag === -1 ? 5 : Math.max(1, Number(process.argv[roundsFlag + 1]));
const warmFlag = process.argv.indexOf('--warm');
const againstFlag = process.argv.indexOf('--against');
const against = againstFlag === -1 ? undefined : process.argv[againstFlag + 1];
/** Seconds of load on each server before the first measured run (Switchyard's JIT settles in ~10 s). */
const warmSeconds = warmFlag === -1 ? 8 : Number(process.argv[warmFlag + 1]);
const durationSeconds = Number(
  process.argv.find(
    (argument, index) => /^\d+$/.test(argument) && index !== roundsFlag + 1 && index !== warmFlag + 1 && index !== againstFlag + 1,
  ) ?? 5,
);
const UPSTREAM_PORT = 18_450;
const SINK_PORT = 18_451;
const GATEWAY_CORE = 0;
const LOAD_CORE = 1;
/** Every request sampled costs at most this multiple of the untraced CPU per request (issue 41). */
const TARGET = 1.15;
const upstreamOrigin = `http://127.0.0.1:${UPSTREAM_PORT}`;

/** The shared bench's configuration: one tier with finite (unreachable) limits, retries on. */
const config = sharedBenchConfig(upstreamOrigin);
const BODY = JSON.stringify({
  model: 'bench-model',
  messages: [{ role: 'user', content: 'Hello there, how are you doing today? Tell me a story about a cat.' }],
  max_tokens: 64,
});

interface Target {
  label: string;
  origin: string;
  key: string;
  pid: number;
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
  started.push(await startProcess('bench/support/otlp-sink.ts', [String(SINK_PORT)], {}, /listening/, LOAD_CORE));
  const configFile = join(mkdtempSync(join(tmpdir(), 'switchyard-tracing-')), 'config.json');
  writeFileSync(configFile, JSON.stringify(config));
  const base = { SWITCHYARD_CONFIG: configFile, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' };
  const traced = { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${SINK_PORT}` };
  const variants: Array<{ label: string; env: NodeJS.ProcessEnv; checkout?: string }> = [
    { label: 'tracing off', env: base },
    { label: 'every request sampled (default sampler, http/protobuf)', env: { ...traced, OTEL_TRACES_SAMPLER: 'parentbased_always_on' } },
    {
      label: 'every request sampled, http/json',
      env: { ...traced, OTEL_TRACES_SAMPLER: 'parentbased_always_on', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    },
    {
      label: 'a tenth sampled (parentbased_traceidratio 0.1)',
      env: { ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
    },
    { label: 'tracing off, a second server (control: the bench spread)', env: base },
  ];
  if (against !== undefined)
    variants.push({
      label: `every request sampled, ${against}`,
      env: { ...traced, OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
      checkout: against,
    });
  const targets: Target[] = [];
  for (const [index, variant] of variants.entries()) {
    const server = await startSwitchyard(variant.env, 18_452 + index, GATEWAY_CORE, variant.checkout);
    started.push(server);
    targets.push({ label: variant.label, origin: server.origin, key: server.key, pid: server.child.pid!, runs: [] });
  }
  const load = (target: Target, label: string, seconds: number, measured: boolean) =>
    runLoad(label, {
      url: `${target.origin}/v1/chat/completions`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.key}` },
      body: BODY,
      durationSeconds: seconds,
      ...(measured ? { serverPid: target.pid } : {}),
    });
  for (const target of targets) await load(target, 'warm-up', warmSeconds, false);
  for (let round = 1; round <= rounds; round++) {
    for (let step = 0; step < targets.length; step++) {
      const target = targets[(round - 1 + step) % targets.length]!;
      await load(target, 'warm-up', 1, false);
      target.runs.push(await load(target, `${target.label} (round ${round})`, durationSeconds, true));
    }
  }
  printTable(
    'Chat JSON, 50 connections, every run (loaded machine: compare CPU within a round)',
    targets.flatMap((target) => target.runs),
  );
  const cpu = (target: Target, round: number): number => target.runs[round]!.serverMicrosecondsPerRequest ?? Number.NaN;
  const off = targets[0]!;
  console.log('\n| server | CPU µs/req (median) | / tracing off, per round | / tracing off (median) | peak RSS MB |');
  console.log('|---|---:|---|---:|---:|');
  // A run that served nothing (a starved server on a busy machine) has no CPU per request: its round is left out.
  const ratios = targets.map((target) =>
    target.runs.map((_, round) => cpu(target, round) / cpu(off, round)).filter((ratio) => !Number.isNaN(ratio)),
  );
  for (const [index, target] of targets.entries()) {
    const each = ratios[index]!;
    console.log(
      `| ${target.label} | ${Math.round(median(target.runs.map((_, round) => cpu(target, round)).filter((value) => !Number.isNaN(value))))} | ${each.map((ratio) => ratio.toFixed(2)).join(', ')} | ${median(each).toFixed(3)}x | ${peakResidentMegabytes(target.pid) ?? '-'} |`,
    );
  }
  const measured = median(ratios[1]!);
  console.log(`\n| target | bound | measured | |`);
  console.log('|---|---:|---:|---|');
  console.log(
    `| tracing every request, CPU / tracing off | <= ${TARGET.toFixed(2)}x | ${measured.toFixed(2)}x | ${measured <= TARGET ? 'met' : 'NOT met'} |`,
  );
} finally {
  for (const process of started.reverse()) await process.stop();
}
