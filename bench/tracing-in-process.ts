/**
 * What tracing costs a JSON chat request, measured in one process (steadier than bench/tracing.ts on a
 * busy machine, see bench/gateway-in-process.ts): three real runtimes (startRuntime: auth, limits in
 * memory, metering to SQLite, the whole pipeline, the real undici client to the mock upstream in its
 * own process) answer `app.inject()` calls, 50 in flight, in interleaved rounds:
 * - tracing off;
 * - every request sampled (the default sampler), exported over OTLP/HTTP protobuf (the default) to a
 *   local sink in its own process (support/otlp-sink.ts);
 * - every request sampled, exported over OTLP/HTTP JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json);
 * - a tenth sampled (`parentbased_traceidratio`, 0.1), the same sink;
 * - tracing on but nothing sampled (`always_off`): tracing's hooks and a `traceparent` upstream, no span.
 * A traced run's CPU includes exporting every span it made (a flush ends the run). Each round starts
 * with the next runtime in turn, and every run starts after a full garbage collection (not counted), so
 * no run pays for the garbage of the one before it. Prints each round's
 * traced / untraced ratio, their median, and the target row (every request sampled: at most 1.15x).
 *
 *   node --import tsx bench/tracing-in-process.ts [requests per run] [--rounds N]
 *
 * Profile with `node --cpu-prof --import tsx bench/tracing-in-process.ts`; `--only off` (or `every`,
 * `json`, `tenth`, `unsampled`) runs one runtime alone, so two profiles can be compared per request.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { GENERATION_CASES } from './support/generation-cases.ts';
import { mockUpstreamConfig } from './support/mock-upstream-config.ts';
import { runPinnedTo, startProcess, type RunningProcess } from './support/processes.ts';
import { loadConfig } from '../src/config/index.ts';
import { startRuntime } from '../src/runtime.ts';

/**
 * A full collection before every measured run (outside it): a run must not pay for the garbage the run
 * before it left (the runtimes take turns in a fixed cycle, so the one after the heaviest would always pay).
 */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const GATEWAY_CORE = 0;
const OTHER_CORE = 1;
runPinnedTo(GATEWAY_CORE);

const roundsFlag = process.argv.indexOf('--rounds');
const rounds = roundsFlag === -1 ? 7 : Math.max(1, Number(process.argv[roundsFlag + 1]));
const onlyFlag = process.argv.indexOf('--only');
const only = onlyFlag === -1 ? undefined : process.argv[onlyFlag + 1];
const requestsPerRun = Number(process.argv.find((argument, index) => /^\d+$/.test(argument) && index !== roundsFlag + 1) ?? 5_000);
const CONCURRENCY = 50;
const TARGET = 1.15;
const UPSTREAM_PORT = 18_460;
const SINK_PORT = 18_461;
const upstreamOrigin = `http://127.0.0.1:${UPSTREAM_PORT}`;

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const started: RunningProcess[] = [];
const runtimes: Array<Awaited<ReturnType<typeof startRuntime>>> = [];
try {
  started.push(await startProcess('bench/support/mock-openai-upstream.ts', [String(UPSTREAM_PORT), '20'], {}, /listening/, OTHER_CORE));
  started.push(await startProcess('bench/support/otlp-sink.ts', [String(SINK_PORT)], {}, /listening/, OTHER_CORE));
  const endpoint = `http://127.0.0.1:${SINK_PORT}/v1/traces`;
  const variants = [
    { name: 'off', label: 'tracing off', tracing: {} },
    { name: 'every', label: 'every request sampled (default sampler, http/protobuf)', tracing: { endpoint } },
    { name: 'json', label: 'every request sampled, http/json', tracing: { endpoint, protocol: 'http/json' as const } },
    {
      name: 'tenth',
      label: 'a tenth sampled (parentbased_traceidratio 0.1)',
      tracing: { endpoint, sampler: 'parentbased_traceidratio' as const, samplerArg: 0.1 },
    },
    {
      name: 'unsampled',
      label: 'tracing on, nothing sampled (always_off)',
      tracing: { endpoint, sampler: 'always_off' as const },
    },
  ].filter((variant) => only === undefined || variant.name === only);
  const body = GENERATION_CASES[0]!.body(false);
  const targets: Array<{ label: string; call: () => Promise<void>; flush: () => Promise<void>; runs: number[] }> = [];
  for (const variant of variants) {
    const config = loadConfig({
      env: {},
      overrides: {
        dataDir: mkdtempSync(join(tmpdir(), 'switchyard-bench-tracing-')),
        logLevel: 'silent',
        bootstrapKey: false,
        limitsBackend: 'memory',
        ...mockUpstreamConfig(upstreamOrigin),
        tracing: variant.tracing,
      },
    });
    // Warnings only (to stderr): a traced run whose export queue overflowed (spans dropped, so not all exported) says so.
    const runtime = await startRuntime(config, { logger: pino({ level: 'warn' }, pino.destination(2)) });
    runtimes.push(runtime);
    await runtime.app.ready();
    const { key } = await runtime.keys.create({ tier: 'Enterprise', name: 'bench' });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    targets.push({
      label: variant.label,
      call: async () => {
        const response = await runtime.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: body });
        if (response.statusCode !== 200) throw new Error(`answered ${response.statusCode}: ${response.body}`);
      },
      flush: async () => {
        await runtime.tracing?.forceFlush();
      },
      runs: [],
    });
  }
  /** CPU µs per request over `calls` requests, 50 in flight, and the export of every span they made. */
  const measure = async (target: (typeof targets)[number], calls: number): Promise<number> => {
    collectGarbage();
    const before = process.cpuUsage();
    let begun = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (begun < calls) {
          begun++;
          await target.call();
        }
      }),
    );
    await target.flush();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / calls;
  };
  for (const target of targets) await measure(target, Math.min(3_000, requestsPerRun));
  // Each round starts with the next runtime (the one run first after another's garbage pays less), so the
  // order's bias falls on every runtime alike.
  for (let round = 0; round < rounds; round++)
    for (let step = 0; step < targets.length; step++) {
      const target = targets[(round + step) % targets.length]!;
      target.runs.push(await measure(target, requestsPerRun));
    }

  if (only === undefined) {
    const off = targets[0]!;
    console.log(
      `\nJSON chat through app.inject(), ${requestsPerRun} requests a run, ${CONCURRENCY} in flight, ${rounds} interleaved rounds`,
    );
    console.log('| runtime | CPU µs/req (median) | / tracing off, per round | / tracing off (median) |');
    console.log('|---|---:|---|---:|');
    const ratios = targets.map((target) => target.runs.map((cpu, round) => cpu / off.runs[round]!));
    for (const [index, target] of targets.entries())
      console.log(
        `| ${target.label} | ${Math.round(median(target.runs))} | ${ratios[index]!.map((ratio) => ratio.toFixed(2)).join(', ')} | ${median(ratios[index]!).toFixed(3)}x |`,
      );
    const measured = median(ratios[1]!);
    console.log('\n| target | bound | measured | |');
    console.log('|---|---:|---:|---|');
    console.log(
      `| tracing every request, CPU / tracing off | <= ${TARGET.toFixed(2)}x | ${measured.toFixed(2)}x | ${measured <= TARGET ? 'met' : 'NOT met'} |`,
    );
  }
} finally {
  for (const runtime of runtimes) await runtime.close();
  for (const process of started.reverse()) await process.stop();
}
