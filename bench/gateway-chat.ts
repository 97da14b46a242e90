/**
 * The gateway hot path beside a minimal undici pass-through proxy, both in front of the same mock
 * OpenAI-compatible upstream, at 50 connections: chat completions, messages and responses, each as
 * JSON and as a stream, with limits in memory and metering on. The gateway and the proxy run pinned to
 * core 0 (both started once, loaded one at a time); the mock upstream and the load generator (this
 * process) to core 1. Each row's ratio comes from a proxy run and a gateway run made back to back
 * (this machine's speed drifts by tens of percent within a minute; adjacent runs see the same drift);
 * with `--rounds N` every row is measured N times and the median ratio is reported. Before the first
 * measured run every server is loaded on each of its cases for a few seconds, so that each is measured
 * in its steady state: Switchyard's JIT compiler needs ~10-15 s of load to settle (with `--trace-opt`,
 * 357, 124, 15 and 10 functions optimised in four consecutive 5-second runs, at 757, 404, 317 and 339
 * CPU µs a request), a 30-line proxy about a second; measured cold, the first row (chat JSON) read
 * ~20% low (0.51 against 0.62 and 0.64 in the next two rounds). Every run is then preceded by a
 * 2-second warm-up as well. For chat completions, a lean translating gateway
 * (support/translating-proxy.ts) is loaded right after each pair, against the same proxy run: the floor
 * any gateway that parses and re-encodes pays. Then time to first byte of a stream through the proxy and
 * the gateway, and RSS of the gateway after the load.
 *
 *   node --import tsx bench/gateway-chat.ts [seconds] [--rounds N] [--limits] [--spaced] [--tracing] [--brief]
 *
 * `--brief` only checks that the script runs (1-second warm-ups, no steady state): its figures are cold.
 * `--tracing` starts a second Switchyard with tracing on (OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
 * local OTLP/HTTP sink that discards, support/otlp-sink.ts; every request sampled, the default) and
 * loads it right after the untraced one on every case: its requests per second and CPU beside tracing off.
 *
 * `--limits` adds chat runs with limits off and on Redis (REDIS_URL or TEST_REDIS_URL). `--spaced`
 * has the mock write a stream one event at a time (support/mock-openai-upstream.ts), so every
 * server reads and forwards it event by event, as it does a real model's tokens; by default a whole
 * stream is one write, which prices a request's fixed costs.
 */
import { GENERATION_CASES } from './support/generation-cases.ts';
import { printTable, runLoad, type CpuSplit, type LoadResult } from './support/load.ts';
import { writeMockUpstreamConfig } from './support/mock-upstream-config.ts';
import { canPin, peakResidentMegabytes, residentMegabytes, runPinnedTo, startProcess, startSwitchyard } from './support/processes.ts';
import { measureFirstByte, printFirstByteTable, type FirstByteResult } from './support/time-to-first-byte.ts';

// The load generator shares core 1 with the mock upstream: re-run this script pinned there.
runPinnedTo(1);

const roundsFlag = process.argv.indexOf('--rounds');
const rounds = roundsFlag === -1 ? 1 : Math.max(1, Number(process.argv[roundsFlag + 1]));
const durationSeconds = Number(process.argv.find((argument, index) => /^\d+$/.test(argument) && index !== roundsFlag + 1) ?? 5);
/** `--brief`: a check that the benchmark runs (1-second warm-ups, no steady-state load), not a measurement. */
const brief = process.argv.includes('--brief');
const WARM_UP_SECONDS = brief ? 1 : 2;
/** Seconds of load on each case of each server before the first measured run (steady state; see above). */
const STEADY_STATE_SECONDS = brief ? 0 : 3;
/** The issue's target: Switchyard's requests per second over the proxy's, in a back-to-back pair. */
const THROUGHPUT_TARGET = 0.7;
/** Streams with `--spaced`: CPU per request at most this multiple of the proxy's, every format. */
const SPACED_STREAM_TARGET = 1.15;
/** Burst streams (one upstream write): CPU per request at most this multiple of the lean translator's. */
const BURST_STREAM_TARGET = 1.25;
/**
 * Resident memory of the build before the house was restructured (fa39b6f, measured 2026-11-27 on this
 * machine): idle, the median of three starts interleaved with this build's; highest under load, from a
 * paired `bench/server-flags.ts` run. Both move by a few MB from start to start.
 */
const RSS_IDLE_MB = 109;
const RSS_LOAD_MB = 149;
const withLimitRuns = process.argv.includes('--limits');
const spacedStreams = process.argv.includes('--spaced');
const withTracing = process.argv.includes('--tracing');
const SINK_PORT = 18_430;
const TRACED_PORT = 18_412;
const redisUrl = process.env['REDIS_URL'] ?? process.env['TEST_REDIS_URL'];
const UPSTREAM_PORT = 18_420;
const PROXY_PORT = 18_421;
const TRANSLATOR_PORT = 18_422;
const TRANSLATOR_KEY = 'sk-bench-translator';
const GATEWAY_CORE = 0;
const LOAD_CORE = 1;

const configFile = writeMockUpstreamConfig(`http://127.0.0.1:${UPSTREAM_PORT}`);

const CASES = GENERATION_CASES;
/** What the proxy forwards: the upstream's own chat body (a pass-through cannot translate). */
const proxyBody = CASES[0]!.body;

interface RatioRow {
  label: string;
  proxy: LoadResult[];
  gateway: LoadResult[];
  /** The lean translating gateway (chat completions only), run right after the pair. */
  translator: LoadResult[];
  /** Switchyard with tracing on (`--tracing`), run right after the untraced one. */
  traced: LoadResult[];
}
const ratios: RatioRow[] = [];
const throughput: LoadResult[] = [];
const firstByte: FirstByteResult[] = [];
const rss: Array<{ label: string; megabytes: number | undefined }> = [];

async function load(label: string, url: string, body: string, headers: Record<string, string>, serverPid: number): Promise<LoadResult> {
  await runLoad('warm-up', { url, method: 'POST', headers, body, durationSeconds: WARM_UP_SECONDS });
  return runLoad(label, { url, method: 'POST', headers, body, durationSeconds, serverPid });
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const upstream = await startProcess(
  'bench/support/mock-openai-upstream.ts',
  [String(UPSTREAM_PORT), '20', ...(spacedStreams ? ['spaced'] : [])],
  {},
  /listening/,
  LOAD_CORE,
);
try {
  const proxy = await startProcess(
    'bench/support/passthrough-proxy.ts',
    [String(PROXY_PORT), `http://127.0.0.1:${UPSTREAM_PORT}`],
    {},
    /listening/,
    GATEWAY_CORE,
  );
  const translator = await startProcess(
    'bench/support/translating-proxy.ts',
    [String(TRANSLATOR_PORT), `http://127.0.0.1:${UPSTREAM_PORT}`, TRANSLATOR_KEY],
    {},
    /listening/,
    GATEWAY_CORE,
  );
  const translatorUrl = `http://127.0.0.1:${TRANSLATOR_PORT}/v1/chat/completions`;
  // Tracing off, whatever the shell exports; the traced twin (`--tracing`) exports to the local sink.
  const untraced = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' };
  const gateway = await startSwitchyard({ SWITCHYARD_CONFIG: configFile, LIMITS_BACKEND: 'memory', ...untraced }, 18_411, GATEWAY_CORE);
  // Idle: started, answered its readiness probe, no load yet.
  const idleMegabytes = residentMegabytes(gateway.child.pid!);
  const sink = withTracing ? await startProcess('bench/support/otlp-sink.ts', [String(SINK_PORT)], {}, /listening/, LOAD_CORE) : undefined;
  const traced = withTracing
    ? await startSwitchyard(
        {
          SWITCHYARD_CONFIG: configFile,
          LIMITS_BACKEND: 'memory',
          ...untraced,
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${SINK_PORT}`,
        },
        TRACED_PORT,
        GATEWAY_CORE,
      )
    : undefined;
  try {
    const tracedHeaders = traced === undefined ? {} : { authorization: `Bearer ${traced.key}`, 'content-type': 'application/json' };
    const proxyUrl = `http://127.0.0.1:${PROXY_PORT}/v1/chat/completions`;
    const proxyHeaders = { 'content-type': 'application/json' };
    const headers = { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' };
    for (const testCase of CASES) {
      for (const stream of [false, true])
        ratios.push({ label: `${testCase.format}, ${stream ? 'stream' : 'JSON'}`, proxy: [], gateway: [], translator: [], traced: [] });
    }
    // Steady state first: every server on each of its cases (the proxy and the translator on both chat bodies).
    for (const stream of STEADY_STATE_SECONDS === 0 ? [] : [false, true]) {
      const warm = { method: 'POST' as const, durationSeconds: STEADY_STATE_SECONDS };
      await runLoad('steady-state warm-up', { ...warm, url: proxyUrl, headers: proxyHeaders, body: proxyBody(stream) });
      await runLoad('steady-state warm-up', {
        ...warm,
        url: translatorUrl,
        headers: { authorization: `Bearer ${TRANSLATOR_KEY}`, 'content-type': 'application/json' },
        body: CASES[0]!.body(stream),
      });
      for (const testCase of CASES) {
        await runLoad('steady-state warm-up', { ...warm, url: `${gateway.origin}${testCase.path}`, headers, body: testCase.body(stream) });
        if (traced !== undefined)
          await runLoad('steady-state warm-up', {
            ...warm,
            url: `${traced.origin}${testCase.path}`,
            headers: tracedHeaders,
            body: testCase.body(stream),
          });
      }
    }
    for (let round = 1; round <= rounds; round++) {
      let row = 0;
      for (const testCase of CASES) {
        for (const stream of [false, true]) {
          const ratio = ratios[row++]!;
          const suffix = rounds > 1 ? ` (round ${round})` : '';
          const proxied = await load(`proxy, ${ratio.label}${suffix}`, proxyUrl, proxyBody(stream), proxyHeaders, proxy.child.pid!);
          const served = await load(
            `switchyard ${ratio.label}${suffix}`,
            `${gateway.origin}${testCase.path}`,
            testCase.body(stream),
            headers,
            gateway.child.pid!,
          );
          throughput.push(proxied, served);
          ratio.proxy.push(proxied);
          ratio.gateway.push(served);
          if (traced !== undefined) {
            const tracedRun = await load(
              `switchyard traced ${ratio.label}${suffix}`,
              `${traced.origin}${testCase.path}`,
              testCase.body(stream),
              tracedHeaders,
              traced.child.pid!,
            );
            throughput.push(tracedRun);
            ratio.traced.push(tracedRun);
          }
          if (testCase.path === '/v1/chat/completions') {
            const translated = await load(
              `lean translating gateway, ${ratio.label}${suffix}`,
              translatorUrl,
              testCase.body(stream),
              { authorization: `Bearer ${TRANSLATOR_KEY}`, 'content-type': 'application/json' },
              translator.child.pid!,
            );
            throughput.push(translated);
            ratio.translator.push(translated);
          }
        }
      }
    }
    firstByte.push(await measureFirstByte('minimal undici pass-through proxy', proxyUrl, proxyBody(true), {}));
    firstByte.push(
      await measureFirstByte('switchyard (chat completions)', `${gateway.origin}/v1/chat/completions`, CASES[0]!.body(true), {
        authorization: headers.authorization,
      }),
    );
    firstByte.push(
      await measureFirstByte('upstream directly (no proxy)', `http://127.0.0.1:${UPSTREAM_PORT}/v1/chat/completions`, proxyBody(true), {}),
    );
    rss.push({ label: 'switchyard, idle after start', megabytes: idleMegabytes });
    rss.push({ label: 'proxy', megabytes: residentMegabytes(proxy.child.pid!) });
    rss.push({ label: 'switchyard, after all runs', megabytes: residentMegabytes(gateway.child.pid!) });
    rss.push({ label: 'switchyard, highest during the runs', megabytes: peakResidentMegabytes(gateway.child.pid!) });
    if (traced !== undefined) rss.push({ label: 'switchyard traced, after all runs', megabytes: residentMegabytes(traced.child.pid!) });
  } finally {
    await traced?.stop();
    await sink?.stop();
    if (sink !== undefined) console.log(sink.output().trim().split('\n').at(-1));
    await gateway.stop();
    await translator.stop();
    await proxy.stop();
  }

  if (withLimitRuns) {
    const limitRuns: Array<[string, NodeJS.ProcessEnv]> = [['limits off', { LIMITS_BACKEND: 'off' }]];
    if (redisUrl !== undefined) limitRuns.push(['limits on Redis', { LIMITS_BACKEND: 'redis', REDIS_URL: redisUrl }]);
    else console.log('(Redis run skipped: set REDIS_URL or TEST_REDIS_URL)');
    for (const [label, env] of limitRuns) {
      const gatewayRun = await startSwitchyard({ SWITCHYARD_CONFIG: configFile, ...env }, 18_411, GATEWAY_CORE);
      try {
        const headers = { authorization: `Bearer ${gatewayRun.key}`, 'content-type': 'application/json' };
        // A fresh server: to its steady state first, as above (on its one case, for as long as the six cases took there).
        await runLoad('steady-state warm-up', {
          url: `${gatewayRun.origin}/v1/chat/completions`,
          method: 'POST',
          headers,
          body: CASES[0]!.body(false),
          durationSeconds: STEADY_STATE_SECONDS * CASES.length * 2,
        });
        throughput.push(
          await load(
            `switchyard chat JSON, ${label}`,
            `${gatewayRun.origin}/v1/chat/completions`,
            CASES[0]!.body(false),
            headers,
            gatewayRun.child.pid!,
          ),
        );
      } finally {
        await gatewayRun.stop();
      }
    }
  }
} finally {
  await upstream.stop();
}

console.log(
  `\nPinned: ${canPin ? `gateway and proxy on core ${GATEWAY_CORE}, upstream and load on core ${LOAD_CORE}` : 'no (taskset not available)'}`,
);
printTable(`Every run, 50 connections, ${durationSeconds} s each`, throughput);
console.log(
  `\nSwitchyard beside the proxy, each ratio from back-to-back runs${rounds > 1 ? `; median of ${rounds} rounds (every round's ratio in brackets)` : ''} (target: ratio >= ${THROUGHPUT_TARGET.toFixed(2)})`,
);
console.log('| format | proxy req/s | switchyard req/s | ratio | proxy CPU µs/req | switchyard CPU µs/req |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const row of ratios) {
  const each = row.gateway.map((served, index) => served.requestsPerSecond / row.proxy[index]!.requestsPerSecond);
  const perRound = rounds > 1 ? ` [${each.map((ratio) => ratio.toFixed(2)).join(', ')}]` : '';
  const cpu = (results: LoadResult[]): string =>
    results.every((result) => result.serverMicrosecondsPerRequest !== undefined)
      ? String(Math.round(median(results.map((result) => result.serverMicrosecondsPerRequest!))))
      : '-';
  console.log(
    `| ${row.label} | ${Math.round(median(row.proxy.map((result) => result.requestsPerSecond)))} | ${Math.round(median(row.gateway.map((result) => result.requestsPerSecond)))} | ${median(each).toFixed(2)}${perRound} | ${cpu(row.proxy)} | ${cpu(row.gateway)} |`,
  );
}
console.log(
  '\nA lean translating gateway (bench/support/translating-proxy.ts: parse, translate, re-encode every chunk, key check and a counter; no token counting, cap, sequencer, retries, ledger, metrics or logs) beside the same proxy runs: how much of the gap any translating gateway pays',
);
console.log('| format | proxy req/s | lean translator req/s | ratio | translator CPU µs/req | switchyard / translator CPU |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const row of ratios) {
  if (row.translator.length === 0) continue;
  const each = row.translator.map((translated, index) => translated.requestsPerSecond / row.proxy[index]!.requestsPerSecond);
  const translatorCpu = median(row.translator.map((result) => result.serverMicrosecondsPerRequest ?? Number.NaN));
  const gatewayCpu = median(row.gateway.map((result) => result.serverMicrosecondsPerRequest ?? Number.NaN));
  console.log(
    `| ${row.label} | ${Math.round(median(row.proxy.map((result) => result.requestsPerSecond)))} | ${Math.round(median(row.translator.map((result) => result.requestsPerSecond)))} | ${median(each).toFixed(2)} | ${Math.round(translatorCpu)} | ${(gatewayCpu / translatorCpu).toFixed(2)} |`,
  );
}
printRelativeCost();
printTargets();
if (withTracing) printTracingCost();
console.log(
  "\nWhere each server's CPU goes, µs per request: main thread in user mode (JavaScript, the runtime, the GC's share on that thread) / main thread in the kernel (mostly socket reads and writes) / all other threads (V8's helpers: concurrent marking, parallel scavenges, background compilation)",
);
console.log('| format | proxy | switchyard | lean translator |');
console.log('|---|---:|---:|---:|');
for (const row of ratios) {
  const split = (results: LoadResult[]): string => {
    const splits = results.map((result) => result.serverCpuSplit);
    if (splits.length === 0 || splits.some((each) => each === undefined)) return '-';
    const part = (key: keyof CpuSplit): number => Math.round(median(splits.map((each) => each![key])));
    return `${part('mainUser')} / ${part('mainKernel')} / ${part('otherThreads')}`;
  };
  console.log(`| ${row.label} | ${split(row.proxy)} | ${split(row.gateway)} | ${split(row.translator)} |`);
}
printFirstByteTable('Streaming chat: time to first byte, 200 sequential requests on one connection', firstByte);
console.log('\nResident memory after the load (target: switchyard < 150 MB)');
for (const row of rss) console.log(`- ${row.label}: ${row.megabytes ?? '-'} MB`);

/**
 * Each server's CPU per request relative to the pass-through proxy's in the same pair (the translator
 * against the proxy run of its pair), median over rounds: a figure this machine's drift (tens of percent
 * within a minute) moves far less than CPU µs compared across rows. Switchyard reads THROUGHPUT_TARGET of
 * the proxy's requests per second when it costs at most 1 / THROUGHPUT_TARGET of its CPU, the line drawn here;
 * the lean translator's column shows what translation alone costs against that line.
 */
function printRelativeCost(): void {
  const relative = (served: LoadResult[], proxied: LoadResult[]): string => {
    const each = served.map(
      (result, index) => (result.serverMicrosecondsPerRequest ?? Number.NaN) / (proxied[index]?.serverMicrosecondsPerRequest ?? Number.NaN),
    );
    return each.length === 0 || each.some((value) => Number.isNaN(value)) ? '-' : `${median(each).toFixed(2)}x`;
  };
  console.log(
    `\nCPU per request as a multiple of the proxy's in the same pair (median over rounds); ${THROUGHPUT_TARGET}x the proxy's requests per second needs at most ${(1 / THROUGHPUT_TARGET).toFixed(2)}x its CPU`,
  );
  console.log('| format | switchyard | lean translator |');
  console.log('|---|---:|---:|');
  for (const row of ratios) console.log(`| ${row.label} | ${relative(row.gateway, row.proxy)} | ${relative(row.translator, row.proxy)} |`);
}

/**
 * The speed targets (docs/performance.md, "The targets, restated"), each as CPU per request as a multiple
 * in the same pair, median over rounds, with the figure this run measured and whether it meets it:
 * - chat JSON at most 1 / THROUGHPUT_TARGET (1.43x) the proxy's CPU;
 * - with `--spaced` (events arrive one by one, as a model sends tokens), every format's stream at most
 *   SPACED_STREAM_TARGET the proxy's;
 * - without it (a whole answer in one upstream write), the chat stream at most BURST_STREAM_TARGET the
 *   lean translator's: any gateway that translates parses and re-encodes every chunk; the rest is ours;
 * - resident memory idle and after the load no higher than the last build's (RSS_IDLE_MB, RSS_LOAD_MB).
 */
function printTargets(): void {
  const cpuOf = (results: LoadResult[]): number[] => results.map((result) => result.serverMicrosecondsPerRequest ?? Number.NaN);
  const multiple = (served: LoadResult[], base: LoadResult[]): number => {
    const baseCpu = cpuOf(base);
    return median(cpuOf(served).map((cpu, index) => cpu / baseCpu[index]!));
  };
  const lines: string[] = [];
  const check = (what: string, measured: number, target: number, unit = 'x'): void => {
    const verdict = Number.isNaN(measured) ? 'not measured' : measured <= target ? 'met' : 'NOT met';
    lines.push(
      `| ${what} | <= ${target}${unit} | ${Number.isNaN(measured) ? '-' : `${measured.toFixed(unit === 'x' ? 2 : 0)}${unit}`} | ${verdict} |`,
    );
  };
  const chatJson = ratios.find((row) => row.label === 'chat completions, JSON');
  if (chatJson !== undefined) check('chat JSON, CPU / proxy', multiple(chatJson.gateway, chatJson.proxy), 1.43);
  for (const row of ratios.filter((each) => each.label.endsWith('stream'))) {
    if (spacedStreams) check(`${row.label} (--spaced), CPU / proxy`, multiple(row.gateway, row.proxy), SPACED_STREAM_TARGET);
    else if (row.translator.length > 0)
      check(`${row.label} (burst), CPU / lean translator`, multiple(row.gateway, row.translator), BURST_STREAM_TARGET);
  }
  const megabytes = (label: string): number => rss.find((row) => row.label === label)?.megabytes ?? Number.NaN;
  check('switchyard resident, idle', megabytes('switchyard, idle after start'), RSS_IDLE_MB, ' MB');
  check('switchyard resident, highest under load', megabytes('switchyard, highest during the runs'), RSS_LOAD_MB, ' MB');
  console.log(
    `\nThe targets (docs/performance.md), median over ${rounds} round${rounds === 1 ? '' : 's'}${spacedStreams ? '' : '; streams against the proxy need --spaced'}`,
  );
  console.log('| target | bound | measured | |');
  console.log('|---|---:|---:|---|');
  for (const line of lines) console.log(line);
}

/**
 * Tracing on beside tracing off (`--tracing`): the traced Switchyard's run follows the untraced one on
 * the same case, so each pair sees the same drift; median over rounds.
 */
function printTracingCost(): void {
  console.log(
    '\nTracing on (every request sampled; OTLP/HTTP JSON to a local sink that discards) beside tracing off, back-to-back runs (median over rounds)',
  );
  console.log('| format | off req/s | on req/s | on / off req/s | off CPU µs/req | on CPU µs/req | on / off CPU |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const row of ratios) {
    if (row.traced.length === 0) continue;
    const each = row.traced.map((result, index) => result.requestsPerSecond / row.gateway[index]!.requestsPerSecond);
    const cpuEach = row.traced.map(
      (result, index) =>
        (result.serverMicrosecondsPerRequest ?? Number.NaN) / (row.gateway[index]!.serverMicrosecondsPerRequest ?? Number.NaN),
    );
    const cpu = (results: LoadResult[]): string =>
      String(Math.round(median(results.map((result) => result.serverMicrosecondsPerRequest ?? Number.NaN))));
    console.log(
      `| ${row.label} | ${Math.round(median(row.gateway.map((result) => result.requestsPerSecond)))} | ${Math.round(median(row.traced.map((result) => result.requestsPerSecond)))} | ${median(each).toFixed(2)} | ${cpu(row.gateway)} | ${cpu(row.traced)} | ${median(cpuEach).toFixed(2)}x |`,
    );
  }
}
