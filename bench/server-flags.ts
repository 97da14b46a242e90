/**
 * Two servers, compared over HTTP in pairs: two sets of node flags, environments or builds (a change
 * against its base). Both run side by side (pinned to core 0, the mock upstream and the load on core 1),
 * and every format, JSON and streamed, is loaded on one and then the other, so each pair sees the same
 * moment of this machine. The order alternates by round (the second server of a pair measured ~9%
 * cheaper in an A/A run), over `ROUNDS` rounds (default 4; keep it even). Prints each server's total
 * CPU µs per request over the runs, every pair's ratio and their median, and each server's peak RSS.
 * Use it to weigh memory settings against CPU (see README, "Memory"), or to price a change.
 *
 *   A="--max-semi-space-size=16 --heap-growing-percent=0" B="" node --import tsx bench/server-flags.ts
 *
 * `PROMOTION=1` also runs both servers with `--trace-gc-nvp` and prints the bytes each promoted per
 * young-generation collection: a change that keeps objects reachable for longer shows there before it
 * shows in CPU (docs/performance.md).
 *
 * `A` and `B` are added after the flags `npm start` uses (so the empty string is `npm start` itself;
 * a later flag wins). The servers run pinned to one core, so that includes `--no-parallel-scavenge`
 * (scripts/service-memory.mjs); `--parallel-scavenge` puts V8's default back. Baseline: A. `A_ENV` / `B_ENV` set environment variables for that server
 * (`B_ENV="MALLOC_MMAP_THRESHOLD_=65536"`). `A_CHECKOUT` / `B_CHECKOUT` run that server from another
 * checkout's build instead of this one, e.g. the base of a change:
 *
 *   git worktree add /tmp/base main && ln -s $PWD/node_modules /tmp/base/ && (cd /tmp/base && npm run build)
 *   A="" A_CHECKOUT=/tmp/base B="" node --import tsx bench/server-flags.ts
 *
 * `SHARED_JSON=1` loads only chat JSON, with the shared bench's configuration and body
 * (support/shared-bench-config.ts; the shape `cpu-per-request.sh` measures), `RUN_SECONDS` (default 3) a
 * run; with `PROMOTION=1` it also prints the bytes each server allocated per request (the `allocated=`
 * of every collection over the requests answered, warm-ups included). `BENCH_PORT_OFFSET=N` moves the
 * ports by N, to run beside another checkout's bench.
 */
import { GENERATION_CASES, type GenerationCase } from './support/generation-cases.ts';
import { runLoad } from './support/load.ts';
import { writeMockUpstreamConfig } from './support/mock-upstream-config.ts';
import { sharedBenchConfig } from './support/shared-bench-config.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peakResidentMegabytes, runPinnedTo, startProcess, startSwitchyard, type SwitchyardProcess } from './support/processes.ts';

runPinnedTo(1);

const PORT_OFFSET = Number(process.env['BENCH_PORT_OFFSET'] ?? 0);
const UPSTREAM_PORT = 18_460 + PORT_OFFSET;
const sharedJson = process.env['SHARED_JSON'] === '1';
const runSeconds = Number(process.env['RUN_SECONDS'] ?? 3);
const SHARED_BODY = JSON.stringify({
  model: 'bench-model',
  messages: [{ role: 'user', content: 'Hello there, how are you doing today? Tell me a story about a cat.' }],
  max_tokens: 64,
});
const cases: readonly GenerationCase[] = sharedJson
  ? [{ format: 'chat completions', path: '/v1/chat/completions', body: () => SHARED_BODY }]
  : GENERATION_CASES;
const streams = sharedJson ? [false] : [false, true];
const variants = [process.env['A'] ?? '--max-semi-space-size=16 --heap-growing-percent=0', process.env['B'] ?? ''];
const tracePromotion = process.env['PROMOTION'] === '1';
const rounds = Number(process.env['ROUNDS'] ?? 4);
const checkouts = [process.env['A_CHECKOUT'], process.env['B_CHECKOUT']];
/** `A_ENV` / `B_ENV`: `NAME=value` pairs, space-separated; they win over `npm start`'s malloc settings. */
const environmentSettings = [process.env['A_ENV'], process.env['B_ENV']];
const environments = environmentSettings.map((variables) =>
  Object.fromEntries(
    (variables ?? '')
      .split(' ')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  ),
);
const configFile = sharedJson ? writeSharedConfig() : writeMockUpstreamConfig(`http://127.0.0.1:${UPSTREAM_PORT}`);

function writeSharedConfig(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'switchyard-server-flags-')), 'config.json');
  writeFileSync(file, JSON.stringify(sharedBenchConfig(`http://127.0.0.1:${UPSTREAM_PORT}`)));
  return file;
}

const upstream = await startProcess('bench/support/mock-openai-upstream.ts', [String(UPSTREAM_PORT), '20'], {}, /listening/, 1);
const servers: SwitchyardProcess[] = [];
const cpu: number[][] = [[], []];
/** Requests each server answered, warm-ups included (for the allocation per request). */
const answered = [0, 0];
try {
  for (const [index, flags] of variants.entries()) {
    process.env['BENCH_SERVER_FLAGS'] = tracePromotion ? `${flags} --trace-gc-nvp` : flags;
    servers.push(
      await startSwitchyard(
        { ...environments[index], SWITCHYARD_CONFIG: configFile, LIMITS_BACKEND: 'memory' },
        18_461 + PORT_OFFSET + index,
        0,
        checkouts[index],
      ),
    );
  }
  for (let round = 0; round < rounds; round++) {
    for (const testCase of cases) {
      for (const stream of streams) {
        const pair = [...servers.entries()];
        for (const [index, server] of round % 2 === 0 ? pair : pair.reverse()) {
          const options = {
            url: `${server.origin}${testCase.path}`,
            method: 'POST' as const,
            headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
            body: testCase.body(stream),
          };
          const warm = await runLoad('warm-up', { ...options, durationSeconds: 1 });
          const result = await runLoad('run', { ...options, durationSeconds: runSeconds, serverPid: server.child.pid! });
          cpu[index]!.push(result.serverMicrosecondsPerRequest ?? Number.NaN);
          answered[index]! += warm.requestsPerSecond + result.requestsPerSecond * runSeconds;
        }
      }
    }
  }
  const total = (figures: number[]): number => figures.reduce((sum, figure) => sum + figure, 0);
  console.log(
    `\n${cases.length * streams.length} loads x ${rounds} rounds per server, 50 connections, ${runSeconds} s each (after 1 s of warm-up)`,
  );
  console.log('| server | extra environment and node flags | build | CPU µs per request, summed over the runs | vs A | peak RSS |');
  console.log('|---|---|---|---:|---:|---:|');
  for (const [index, server] of servers.entries()) {
    console.log(
      `| ${index === 0 ? 'A' : 'B'} | \`${[environmentSettings[index], variants[index]].filter(Boolean).join(' ') || '(npm start as is)'}\` | ${checkouts[index] ?? 'this checkout'} | ${total(cpu[index]!)} | ${(total(cpu[index]!) / total(cpu[0]!)).toFixed(3)} | ${peakResidentMegabytes(server.child.pid!) ?? '-'} MB |`,
    );
  }
  if (tracePromotion) {
    console.log('\nPromoted per young-generation collection, mean over the whole run (--trace-gc-nvp `promoted=`):');
    for (const [index, server] of servers.entries())
      console.log(
        `- ${index === 0 ? 'A' : 'B'}: ${meanPromotedKilobytes(server.output())} KB; allocated ${allocatedKilobytesPerRequest(server.output(), answered[index]!)} KB a request`,
      );
  }
  const pairs = cpu[1]!.map((figure, run) => figure / cpu[0]![run]!);
  const sorted = [...pairs].sort((left, right) => left - right);
  console.log(`\nB/A, pair by pair: ${pairs.map((ratio) => ratio.toFixed(2)).join(' ')}`);
  console.log(`median pair ratio (robust to one disturbed run): ${sorted[Math.floor(sorted.length / 2)]!.toFixed(3)}`);
} finally {
  for (const server of servers) await server.stop();
  await upstream.stop();
}

/** Mean `promoted=` of the scavenges (`gc=s`) in a `--trace-gc-nvp` output, kilobytes. */
function meanPromotedKilobytes(output: string): string {
  const promoted = [...output.matchAll(/gc=s .*?promoted=(\d+)/g)].map((match) => Number(match[1]));
  if (promoted.length === 0) return '-';
  return (promoted.reduce((sum, bytes) => sum + bytes, 0) / promoted.length / 1024).toFixed(0);
}

/** The `allocated=` of every collection in a `--trace-gc-nvp` output over `requests`, kilobytes a request. */
function allocatedKilobytesPerRequest(output: string, requests: number): string {
  let bytes = 0;
  for (const match of output.matchAll(/allocated=(\d+)/g)) bytes += Number(match[1]);
  return requests === 0 ? '-' : (bytes / requests / 1024).toFixed(1);
}
