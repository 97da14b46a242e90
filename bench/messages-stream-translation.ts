/**
 * Issue 4 benchmark: the cost of translating a stream. One mock OpenAI-compatible upstream streams a
 * long answer (`chunks` text deltas); in the same run we read it
 *   1. through a minimal undici pass-through proxy (the upstream's chunks, untranslated),
 *   2. through Switchyard's POST /v1/chat/completions (parsed, canonical parts, re-encoded as chunks),
 *   3. through Switchyard's POST /v1/messages (parsed, canonical parts, encoded as Anthropic events),
 * with `concurrency` streams at a time for `seconds` each, and report SSE events delivered per second
 * and upstream chunks carried per second (the comparable figure: one upstream chunk becomes one
 * event in every path, plus a few framing events). Every server runs in its own child process.
 *
 *   node --import tsx bench/messages-stream-translation.ts [seconds] [chunks] [concurrency]
 */
import { Agent, request } from 'undici';
import { writeMockUpstreamConfig } from './support/mock-upstream-config.ts';
import { startProcess, startSwitchyard } from './support/processes.ts';

const durationSeconds = Number(process.argv[2] ?? 3);
const chunkCount = Number(process.argv[3] ?? 1000);
const concurrency = Number(process.argv[4] ?? 4);
const UPSTREAM_PORT = 18_440;
const PROXY_PORT = 18_441;
const SWITCHYARD_PORT = 18_442;

interface StreamRunResult {
  label: string;
  streams: number;
  /** SSE events received by the client per second. */
  eventsPerSecond: number;
  /** Upstream text chunks carried to the client per second. */
  upstreamChunksPerSecond: number;
  /** SSE events in one stream. */
  eventsPerStream: number;
  errors: number;
}

/** Counts SSE events (blank-line terminated) in a streamed body, across chunk boundaries. */
async function countEvents(body: AsyncIterable<Buffer>): Promise<number> {
  let events = 0;
  let previous = 0;
  for await (const chunk of body) {
    for (let index = 0; index < chunk.length; index++) {
      const byte = chunk[index]!;
      if (byte === 10 && previous === 10) events++;
      previous = byte;
    }
  }
  return events;
}

async function runStreams(label: string, url: string, body: string, headers: Record<string, string>): Promise<StreamRunResult> {
  const dispatcher = new Agent({ connections: concurrency });
  let streams = 0;
  let events = 0;
  let errors = 0;
  let eventsPerStream = 0;
  const deadline = process.hrtime.bigint() + BigInt(durationSeconds * 1e9);
  const started = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    while (process.hrtime.bigint() < deadline) {
      try {
        const response = await request(url, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', ...headers },
          dispatcher,
        });
        if (response.statusCode !== 200) {
          errors++;
          await response.body.text();
          continue;
        }
        const count = await countEvents(response.body);
        events += count;
        eventsPerStream = count;
        streams++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await dispatcher.close();
  return {
    label,
    streams,
    eventsPerSecond: Math.round(events / seconds),
    upstreamChunksPerSecond: Math.round((streams * chunkCount) / seconds),
    eventsPerStream,
    errors,
  };
}

const configFile = writeMockUpstreamConfig(`http://127.0.0.1:${UPSTREAM_PORT}`, { maxOutputTokens: 8192 });
const chatBody = JSON.stringify({
  model: 'bench-model',
  stream: true,
  max_tokens: 4096,
  messages: [{ role: 'user', content: 'Write a long text.' }],
});
const messagesBody = JSON.stringify({
  model: 'bench-model',
  stream: true,
  max_tokens: 4096,
  messages: [{ role: 'user', content: 'Write a long text.' }],
});

const rows: StreamRunResult[] = [];
const upstream = await startProcess('bench/support/mock-openai-upstream.ts', [String(UPSTREAM_PORT), String(chunkCount)], {}, /listening/);
try {
  const proxy = await startProcess(
    'bench/support/passthrough-proxy.ts',
    [String(PROXY_PORT), `http://127.0.0.1:${UPSTREAM_PORT}`],
    {},
    /listening/,
  );
  try {
    const url = `http://127.0.0.1:${PROXY_PORT}/v1/chat/completions`;
    await runStreams('warm-up', url, chatBody, {});
    rows.push(await runStreams('pass-through proxy, untranslated chunks', url, chatBody, {}));
  } finally {
    await proxy.stop();
  }
  const switchyard = await startSwitchyard({ SWITCHYARD_CONFIG: configFile, LIMITS_BACKEND: 'off' }, SWITCHYARD_PORT);
  try {
    const headers = { authorization: `Bearer ${switchyard.key}` };
    const chatUrl = `${switchyard.origin}/v1/chat/completions`;
    const messagesUrl = `${switchyard.origin}/v1/messages`;
    await runStreams('warm-up', chatUrl, chatBody, headers);
    rows.push(await runStreams('switchyard /v1/chat/completions (chunks re-encoded)', chatUrl, chatBody, headers));
    await runStreams('warm-up', messagesUrl, messagesBody, headers);
    rows.push(await runStreams('switchyard /v1/messages (translated to messages events)', messagesUrl, messagesBody, headers));
  } finally {
    await switchyard.stop();
  }
} finally {
  await upstream.stop();
}

console.log(`\nStreams of ${chunkCount} upstream text chunks, ${concurrency} at a time, ${durationSeconds} s per run`);
console.log('| path | streams | SSE events/s | upstream chunks/s | events per stream | errors |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const row of rows) {
  console.log(
    `| ${row.label} | ${row.streams} | ${row.eventsPerSecond} | ${row.upstreamChunksPerSecond} | ${row.eventsPerStream} | ${row.errors} |`,
  );
}
