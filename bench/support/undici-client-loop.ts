/**
 * The upstream call alone: `requests` POSTs of the chat body to the mock upstream, 50 in flight, each
 * cancellable and its answer read whole. `request` mode makes them with undici's `request()` (a
 * Readable per body) and an AbortSignal each; `switchyard` mode with Switchyard's own client
 * (providers/shared/http-client.ts: undici's dispatch interface, no Readable, a CancellationSource),
 * as the providers make them. Prints this process's CPU µs per request as `cpu-us-per-request <n>`.
 * Run: `node --import tsx bench/support/undici-client-loop.ts <upstream origin> <requests> [stream] [request|switchyard]`.
 */
import { Pool } from 'undici';
import { cpuMicrosecondsPerCall } from './cpu-per-request.ts';
import { GENERATION_CASES } from './generation-cases.ts';
import { CancellationSource } from '../../src/core/cancellation.ts';
import { UpstreamHttpClient } from '../../src/providers/shared/http-client.ts';

const origin = process.argv[2] ?? 'http://127.0.0.1:18420';
const requests = Number(process.argv[3] ?? 20_000);
const stream = process.argv[4] === 'stream';
const mode = process.argv[5] === 'switchyard' ? 'switchyard' : 'request';
const body = GENERATION_CASES[0]!.body(stream);
const payload = JSON.parse(body) as unknown;

const pool = new Pool(origin);
const client = new UpstreamHttpClient({ baseUrl: `${origin}/v1`, timeoutMs: 30_000 });

async function viaRequest(): Promise<void> {
  const response = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body,
    signal: new AbortController().signal,
  });
  for await (const chunk of response.body) void chunk;
}

async function viaSwitchyardClient(): Promise<void> {
  const response = await client.postJson('/chat/completions', payload, {}, new CancellationSource());
  while ((await response.body.read()) !== undefined);
}

const call = mode === 'switchyard' ? viaSwitchyardClient : viaRequest;
await cpuMicrosecondsPerCall(call, 3000); // warm-up
console.log(`cpu-us-per-request ${(await cpuMicrosecondsPerCall(call, requests)).toFixed(1)}`);
await pool.close();
await client.close();
