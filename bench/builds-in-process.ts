/**
 * Two builds of the gateway priced against each other in one process: each checkout's compiled runtime
 * (`dist/`, built there with `npm run build`) answers `app.inject()` chat JSON requests with the shared
 * bench's configuration and body (support/shared-bench-config.ts), 50 in flight, the mock upstream in its
 * own process on the other core. Rounds alternate which build goes first; both see the same moments of
 * the machine, so a loaded machine moves both alike (over HTTP on a loaded 2-core machine, pairs of
 * server-flags.ts runs spread 0.5-6x; here 0.83-1.17). No socket: node's HTTP server, the client and
 * the kernel are left out, so read the ratio as that of the gateway's own work plus undici's.
 *
 *   node --import tsx bench/builds-in-process.ts <base checkout> [requests per run] [rounds]
 *
 * e.g. `git worktree add --detach /tmp/base main && ln -s $PWD/node_modules /tmp/base/ && (cd /tmp/base && npm run build)`,
 * `npm run build`, then `node --import tsx bench/builds-in-process.ts /tmp/base 2000 12`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { cpuMicrosecondsPerCall } from './support/cpu-per-request.ts';
import { runPinnedTo, startProcess } from './support/processes.ts';
import { sharedBenchConfig } from './support/shared-bench-config.ts';
import type { loadConfig as loadConfigType } from '../src/config/index.ts';
import type { startRuntime as startRuntimeType } from '../src/runtime.ts';

runPinnedTo(0);

const baseCheckout = process.argv[2];
if (baseCheckout === undefined) throw new Error('usage: bench/builds-in-process.ts <base checkout> [requests per run] [rounds]');
const perRun = Number(process.argv[3] ?? 2000);
const rounds = Number(process.argv[4] ?? 12);
const PORT = 18_750 + Number(process.env['BENCH_PORT_OFFSET'] ?? 0);
const origin = `http://127.0.0.1:${PORT}`;
const body = JSON.stringify({
  model: 'bench-model',
  messages: [{ role: 'user', content: 'Hello there, how are you doing today? Tell me a story about a cat.' }],
  max_tokens: 64,
});

interface Build {
  label: string;
  call: () => Promise<void>;
  close: () => Promise<void>;
}

async function startBuild(label: string, checkout: string): Promise<Build> {
  // Each checkout's own compiled modules: two separate runtimes in one process.
  const { loadConfig } = (await import(join(checkout, 'dist/src/config/index.js'))) as { loadConfig: typeof loadConfigType };
  const { startRuntime } = (await import(join(checkout, 'dist/src/runtime.js'))) as { startRuntime: typeof startRuntimeType };
  const config = loadConfig({
    env: {},
    overrides: {
      ...(sharedBenchConfig(origin) as object),
      dataDir: mkdtempSync(join(tmpdir(), `switchyard-builds-${label}-`)),
      logLevel: 'silent',
      bootstrapKey: false,
      limitsBackend: 'memory',
    } as never,
  });
  const runtime = await startRuntime(config, { logger: pino({ level: 'silent' }) });
  await runtime.app.ready();
  const { key } = await runtime.keys.create({ tier: config.defaultTier, name: 'bench' });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return {
    label,
    call: async () => {
      const response = await runtime.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: body });
      if (response.statusCode !== 200) throw new Error(`${label} answered ${response.statusCode}: ${response.body}`);
    },
    close: () => runtime.close(),
  };
}

const median = (values: number[]): number => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;
const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);
const list = (values: number[]): string => values.map((value) => value.toFixed(2)).join(' ');

const upstream = await startProcess('bench/support/mock-openai-upstream.ts', [String(PORT), '20'], {}, /listening/, 1);
const builds: Build[] = [];
try {
  builds.push(await startBuild('base', resolve(baseCheckout)), await startBuild('this', process.cwd()));
  // Warm-up: the JIT of both.
  for (const build of builds) await cpuMicrosecondsPerCall(build.call, 4 * perRun, 50);
  const figures: number[][] = [[], []];
  for (let round = 0; round < rounds; round++) {
    for (const index of round % 2 === 0 ? [0, 1] : [1, 0])
      figures[index]!.push(await cpuMicrosecondsPerCall(builds[index]!.call, perRun, 50));
  }
  const pairs = figures[1]!.map((value, index) => value / figures[0]![index]!);
  console.log(`chat JSON, shared configuration and body, ${rounds} rounds of ${perRun} requests, CPU µs per request`);
  for (const [index, build] of builds.entries())
    console.log(
      `${build.label.padEnd(5)} median ${median(figures[index]!).toFixed(0)} [${figures[index]!.map((value) => value.toFixed(0)).join(' ')}]`,
    );
  console.log(
    `this / base: ${(sum(figures[1]!) / sum(figures[0]!)).toFixed(3)} summed, median pair ${median(pairs).toFixed(3)}; pairs ${list(pairs)}`,
  );
} finally {
  for (const build of builds) await build.close();
  await upstream.stop();
}
