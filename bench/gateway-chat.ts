/**
 * Issue 3 and 7 benchmark: non-streaming chat through Switchyard (auth, routing, translation,
 * metering and limits on) beside a minimal undici pass-through proxy, both in front of the same mock
 * OpenAI-compatible upstream, at 50 connections; then time to first byte of a stream through both;
 * then Switchyard with limits off, in memory and on Redis (when REDIS_URL or TEST_REDIS_URL is set).
 * Every server runs in its own child process.
 *
 *   node --import tsx bench/gateway-chat.ts [seconds]
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printTable, runLoad, type LoadResult } from './support/load.ts';
import { startProcess, startSwitchyard, type SwitchyardProcess } from './support/processes.ts';
import { measureFirstByte, printFirstByteTable, type FirstByteResult } from './support/time-to-first-byte.ts';

const durationSeconds = Number(process.argv[2] ?? 5);
const redisUrl = process.env['REDIS_URL'] ?? process.env['TEST_REDIS_URL'];
const UPSTREAM_PORT = 18_420;
const PROXY_PORT = 18_421;

const configFile = join(mkdtempSync(join(tmpdir(), 'switchyard-bench-config-')), 'config.json');
writeFileSync(
  configFile,
  JSON.stringify({
    defaultTier: 'Enterprise',
    providers: { mock: { kind: 'openai-compatible', baseUrl: `http://127.0.0.1:${UPSTREAM_PORT}/v1`, maxRetries: 0 } },
    models: [{ id: 'bench-model', provider: 'mock', capabilities: ['chat', 'streaming'], pricing: { inputPerMillion: 1, outputPerMillion: 2 } }],
  }),
);

const chatBody = JSON.stringify({ model: 'bench-model', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello in twenty words.' }] });
const streamBody = JSON.stringify({ model: 'bench-model', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Say hello in twenty words.' }] });

const throughput: LoadResult[] = [];
const firstByte: FirstByteResult[] = [];

async function benchSwitchyard(label: string, env: NodeJS.ProcessEnv, withFirstByte: boolean): Promise<void> {
  let switchyard: SwitchyardProcess | undefined;
  try {
    switchyard = await startSwitchyard({ SWITCHYARD_CONFIG: configFile, ...env });
    const headers = { authorization: `Bearer ${switchyard.key}`, 'content-type': 'application/json' };
    const url = `${switchyard.origin}/v1/chat/completions`;
    await runLoad('warm-up', { url, method: 'POST', headers, body: chatBody, durationSeconds: 1 });
    throughput.push(await runLoad(label, { url, method: 'POST', headers, body: chatBody, durationSeconds, serverPid: switchyard.child.pid! }));
    if (withFirstByte) firstByte.push(await measureFirstByte(label, url, streamBody, { authorization: headers.authorization }));
  } finally {
    await switchyard?.stop();
  }
}

const upstream = await startProcess('bench/support/mock-openai-upstream.ts', [String(UPSTREAM_PORT), '20'], {}, /listening/);
try {
  const proxy = await startProcess('bench/support/passthrough-proxy.ts', [String(PROXY_PORT), `http://127.0.0.1:${UPSTREAM_PORT}`], {}, /listening/);
  try {
    const url = `http://127.0.0.1:${PROXY_PORT}/v1/chat/completions`;
    const headers = { 'content-type': 'application/json' };
    await runLoad('warm-up', { url, method: 'POST', headers, body: chatBody, durationSeconds: 1 });
    throughput.push(await runLoad('minimal undici pass-through proxy', { url, method: 'POST', headers, body: chatBody, durationSeconds, serverPid: proxy.child.pid! }));
    firstByte.push(await measureFirstByte('minimal undici pass-through proxy', url, streamBody, {}));
  } finally {
    await proxy.stop();
  }
  firstByte.push(await measureFirstByte('upstream directly (no proxy)', `http://127.0.0.1:${UPSTREAM_PORT}/v1/chat/completions`, streamBody, {}));
  await benchSwitchyard('switchyard, limits in memory', { LIMITS_BACKEND: 'memory' }, true);
  await benchSwitchyard('switchyard, limits off', { LIMITS_BACKEND: 'off' }, false);
  if (redisUrl !== undefined) await benchSwitchyard('switchyard, limits on Redis', { LIMITS_BACKEND: 'redis', REDIS_URL: redisUrl }, false);
  else console.log('(Redis run skipped: set REDIS_URL or TEST_REDIS_URL)');
} finally {
  await upstream.stop();
}

printTable(`Non-streaming chat completions, 50 connections, ${durationSeconds} s each`, throughput);
printFirstByteTable('Streaming chat: time to first byte, 200 sequential requests on one connection', firstByte);
