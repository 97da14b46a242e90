/**
 * The gateway hot path beside a minimal undici pass-through proxy, both in front of the same mock
 * OpenAI-compatible upstream, at 50 connections, measured in one run: chat completions, messages and
 * responses, each as JSON and as a stream, with limits in memory and metering on. The gateway (and the
 * proxy) run pinned to core 0; the mock upstream and the load generator (this process) to core 1.
 * Then time to first byte of a stream through both, and RSS of the gateway after the load.
 *
 *   node --import tsx bench/gateway-chat.ts [seconds] [--limits]
 *
 * `--limits` adds chat runs with limits off and on Redis (REDIS_URL or TEST_REDIS_URL).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printTable, runLoad, type LoadResult } from './support/load.ts';
import { canPin, residentMegabytes, startProcess, startSwitchyard } from './support/processes.ts';
import { measureFirstByte, printFirstByteTable, type FirstByteResult } from './support/time-to-first-byte.ts';

// The load generator shares core 1 with the mock upstream: re-run this script pinned there.
if (canPin && process.env['BENCH_PINNED'] !== '1') {
  const pinned = spawnSync('taskset', ['-c', '1', process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  });
  process.exit(pinned.status ?? 1);
}

const durationSeconds = Number(process.argv.find((argument) => /^\d+$/.test(argument)) ?? 5);
const withLimitRuns = process.argv.includes('--limits');
const redisUrl = process.env['REDIS_URL'] ?? process.env['TEST_REDIS_URL'];
const UPSTREAM_PORT = 18_420;
const PROXY_PORT = 18_421;
const GATEWAY_CORE = 0;
const LOAD_CORE = 1;

const configFile = join(mkdtempSync(join(tmpdir(), 'switchyard-bench-config-')), 'config.json');
writeFileSync(
  configFile,
  JSON.stringify({
    defaultTier: 'Enterprise',
    providers: { mock: { kind: 'openai-compatible', baseUrl: `http://127.0.0.1:${UPSTREAM_PORT}/v1`, maxRetries: 0 } },
    models: [
      { id: 'bench-model', provider: 'mock', capabilities: ['chat', 'streaming'], pricing: { inputPerMillion: 1, outputPerMillion: 2 } },
    ],
  }),
);

const prompt = 'Say hello in twenty words.';
interface Case {
  format: string;
  path: string;
  body: (stream: boolean) => string;
}
const CASES: Case[] = [
  {
    format: 'chat completions',
    path: '/v1/chat/completions',
    body: (stream) => JSON.stringify({ model: 'bench-model', max_tokens: 64, stream, messages: [{ role: 'user', content: prompt }] }),
  },
  {
    format: 'messages',
    path: '/v1/messages',
    body: (stream) => JSON.stringify({ model: 'bench-model', max_tokens: 64, stream, messages: [{ role: 'user', content: prompt }] }),
  },
  {
    format: 'responses',
    path: '/v1/responses',
    body: (stream) => JSON.stringify({ model: 'bench-model', max_output_tokens: 64, stream, store: false, input: prompt }),
  },
];
/** What the proxy forwards: the upstream's own chat body (a pass-through cannot translate). */
const proxyBody = CASES[0]!.body;

interface RatioRow {
  label: string;
  proxy: LoadResult;
  gateway: LoadResult;
}
const ratios: RatioRow[] = [];
const throughput: LoadResult[] = [];
const firstByte: FirstByteResult[] = [];
const rss: Array<{ label: string; megabytes: number | undefined }> = [];

async function load(label: string, url: string, body: string, headers: Record<string, string>, serverPid: number): Promise<LoadResult> {
  await runLoad('warm-up', { url, method: 'POST', headers, body, durationSeconds: 1 });
  return runLoad(label, { url, method: 'POST', headers, body, durationSeconds, serverPid });
}

const upstream = await startProcess('bench/support/mock-openai-upstream.ts', [String(UPSTREAM_PORT), '20'], {}, /listening/, LOAD_CORE);
try {
  const proxyResults = new Map<boolean, LoadResult>();
  const proxy = await startProcess(
    'bench/support/passthrough-proxy.ts',
    [String(PROXY_PORT), `http://127.0.0.1:${UPSTREAM_PORT}`],
    {},
    /listening/,
    GATEWAY_CORE,
  );
  try {
    const url = `http://127.0.0.1:${PROXY_PORT}/v1/chat/completions`;
    const headers = { 'content-type': 'application/json' };
    for (const stream of [false, true]) {
      const result = await load(`proxy, ${stream ? 'stream' : 'JSON'}`, url, proxyBody(stream), headers, proxy.child.pid!);
      proxyResults.set(stream, result);
      throughput.push(result);
    }
    firstByte.push(await measureFirstByte('minimal undici pass-through proxy', url, proxyBody(true), {}));
    rss.push({ label: 'proxy', megabytes: residentMegabytes(proxy.child.pid!) });
  } finally {
    await proxy.stop();
  }
  firstByte.push(
    await measureFirstByte('upstream directly (no proxy)', `http://127.0.0.1:${UPSTREAM_PORT}/v1/chat/completions`, proxyBody(true), {}),
  );

  const gateway = await startSwitchyard({ SWITCHYARD_CONFIG: configFile, LIMITS_BACKEND: 'memory' }, 18_411, GATEWAY_CORE);
  try {
    const headers = { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' };
    for (const testCase of CASES) {
      for (const stream of [false, true]) {
        const label = `${testCase.format}, ${stream ? 'stream' : 'JSON'}`;
        const result = await load(
          `switchyard ${label}`,
          `${gateway.origin}${testCase.path}`,
          testCase.body(stream),
          headers,
          gateway.child.pid!,
        );
        throughput.push(result);
        ratios.push({ label, proxy: proxyResults.get(stream)!, gateway: result });
      }
    }
    firstByte.push(
      await measureFirstByte('switchyard (chat completions)', `${gateway.origin}/v1/chat/completions`, CASES[0]!.body(true), {
        authorization: headers.authorization,
      }),
    );
    rss.push({ label: 'switchyard, after all runs', megabytes: residentMegabytes(gateway.child.pid!) });
  } finally {
    await gateway.stop();
  }

  if (withLimitRuns) {
    const limitRuns: Array<[string, NodeJS.ProcessEnv]> = [['limits off', { LIMITS_BACKEND: 'off' }]];
    if (redisUrl !== undefined) limitRuns.push(['limits on Redis', { LIMITS_BACKEND: 'redis', REDIS_URL: redisUrl }]);
    else console.log('(Redis run skipped: set REDIS_URL or TEST_REDIS_URL)');
    for (const [label, env] of limitRuns) {
      const gatewayRun = await startSwitchyard({ SWITCHYARD_CONFIG: configFile, ...env }, 18_411, GATEWAY_CORE);
      try {
        const headers = { authorization: `Bearer ${gatewayRun.key}`, 'content-type': 'application/json' };
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
console.log('\nSwitchyard beside the proxy, same run (target: ratio >= 0.70)');
console.log('| format | proxy req/s | switchyard req/s | ratio | proxy CPU µs/req | switchyard CPU µs/req |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const row of ratios) {
  const ratio = (row.gateway.requestsPerSecond / row.proxy.requestsPerSecond).toFixed(2);
  console.log(
    `| ${row.label} | ${row.proxy.requestsPerSecond} | ${row.gateway.requestsPerSecond} | ${ratio} | ${row.proxy.serverMicrosecondsPerRequest ?? '-'} | ${row.gateway.serverMicrosecondsPerRequest ?? '-'} |`,
  );
}
printFirstByteTable('Streaming chat: time to first byte, 200 sequential requests on one connection', firstByte);
console.log('\nResident memory after the load (target: switchyard < 150 MB)');
for (const row of rss) console.log(`- ${row.label}: ${row.megabytes ?? '-'} MB`);
