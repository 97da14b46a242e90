/**
 * The upstream call alone: `requests` POSTs of the chat body to the mock upstream through an undici
 * Pool, 50 in flight, each with an AbortSignal and its answer read whole, as the gateway's provider
 * makes them. Prints this process's CPU µs per request as `cpu-us-per-request <n>`.
 * Run: `node --import tsx bench/support/undici-client-loop.ts <upstream origin> <requests> [stream]`.
 */
import { Pool } from 'undici';
import { cpuMicrosecondsPerCall } from './cpu-per-request.ts';
import { GENERATION_CASES } from './generation-cases.ts';

const pool = new Pool(process.argv[2] ?? 'http://127.0.0.1:18420');
const requests = Number(process.argv[3] ?? 20_000);
const body = GENERATION_CASES[0]!.body(process.argv[4] === 'stream');

async function call(): Promise<void> {
  const response = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body,
    signal: new AbortController().signal,
  });
  for await (const chunk of response.body) void chunk;
}

await cpuMicrosecondsPerCall(call, 3000); // warm-up
console.log(`cpu-us-per-request ${(await cpuMicrosecondsPerCall(call, requests)).toFixed(1)}`);
await pool.close();
