/**
 * What a generation request costs before any of Switchyard's own work, on the same mock upstream and
 * pinning as bench/gateway-chat.ts (servers on core 0, mock upstream and load on core 1, 50
 * connections): raw node:http and a bare Fastify app answering a canned chat completion to a parsed
 * POST body, the minimal pass-through proxy, and the undici upstream call alone (a client loop pinned
 * to core 0), made with undici's request() (the baseline) and with Switchyard's own client. Read
 * beside gateway-chat's figures, it says how much of the gateway's CPU per request is the framework,
 * how much the upstream call, and how much Switchyard's own work.
 *
 *   node --import tsx bench/http-floor.ts [seconds]
 */
import { spawnSync } from 'node:child_process';
import { GENERATION_CASES } from './support/generation-cases.ts';
import { printTable, runLoad, type LoadResult } from './support/load.ts';
import { canPin, runPinnedTo, startProcess } from './support/processes.ts';

runPinnedTo(1);

const durationSeconds = Number(process.argv[2] ?? 5);
const UPSTREAM_PORT = 18_440;
const SERVER_PORT = 18_441;
const upstreamOrigin = `http://127.0.0.1:${UPSTREAM_PORT}`;
const body = GENERATION_CASES[0]!.body(false);
const headers = { 'content-type': 'application/json' };
const rows: LoadResult[] = [];

async function measureServer(label: string, script: string, args: string[]): Promise<void> {
  const server = await startProcess(script, [String(SERVER_PORT), ...args], {}, /listening/, 0);
  try {
    const url = `http://127.0.0.1:${SERVER_PORT}/v1/chat/completions`;
    await runLoad('warm-up', { url, method: 'POST', headers, body, durationSeconds: 2 });
    rows.push(await runLoad(label, { url, method: 'POST', headers, body, durationSeconds, serverPid: server.child.pid! }));
  } finally {
    await server.stop();
  }
}

const upstream = await startProcess('bench/support/mock-openai-upstream.ts', [String(UPSTREAM_PORT), '20'], {}, /listening/, 1);
const upstreamCalls: Array<[string, string]> = [];
try {
  await measureServer('raw node:http: parse the body, answer a canned completion', 'bench/support/minimal-json-server.ts', ['http']);
  await measureServer('bare Fastify: the same', 'bench/support/minimal-json-server.ts', ['fastify']);
  await measureServer('minimal pass-through proxy (undici) to the mock upstream', 'bench/support/passthrough-proxy.ts', [upstreamOrigin]);
  for (const mode of ['request', 'switchyard'] as const) {
    for (const stream of [false, true]) {
      const loop = spawnSync(
        'taskset',
        [
          '-c',
          '0',
          process.execPath,
          '--import',
          'tsx',
          'bench/support/undici-client-loop.ts',
          upstreamOrigin,
          '20000',
          stream ? 'stream' : '',
          mode,
        ],
        { encoding: 'utf8' },
      );
      const label = `${mode === 'request' ? "undici's request() (a Readable per body, an AbortSignal)" : "Switchyard's client (dispatch, no Readable, a CancellationSource)"}, ${stream ? 'streamed' : 'JSON'}`;
      upstreamCalls.push([label, /cpu-us-per-request ([\d.]+)/.exec(loop.stdout)?.[1] ?? `failed: ${loop.stderr}`]);
    }
  }
} finally {
  await upstream.stop();
}

printTable(`Servers on core ${canPin ? 0 : '-'}, 50 connections, ${durationSeconds} s each (POST of the chat body)`, rows);
console.log('\nThe upstream call alone (undici Pool, answer read whole), 50 in flight, client CPU µs per request');
for (const [label, figure] of upstreamCalls) console.log(`- ${label}: ${figure}`);
