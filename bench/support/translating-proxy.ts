/**
 * A second baseline for the gateway benchmark: the least a gateway that translates and meters must do
 * for chat completions, written as leanly as Node allows, beside the pass-through proxy (which neither
 * reads nor writes JSON). Per request it checks a bearer key (one Map lookup) and a per-key request
 * counter, parses the client's JSON body, writes a new upstream body, calls the upstream with undici
 * (aborted when the client leaves), and answers in the client's wire format with a fresh id and a
 * `_metadata` object: a JSON answer parsed and rebuilt, or a stream whose every upstream chunk is parsed
 * and re-encoded (the constant head and tail of a chunk serialised once, as the real encoder does), one
 * write per upstream read. Usage is kept in memory.
 *
 * What it leaves out, each of which Switchyard must do: prompt token counting, the output cap, the
 * block sequencer, retries and fallbacks, the ledger in SQLite, metrics and logs, the SPEC's full
 * validation and error envelopes, every other format and backend.
 *
 * Run: `node --import tsx bench/support/translating-proxy.ts <port> <upstream origin> <key>`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'undici';
import { newId } from '../../src/core/ids.ts';

const port = Number(process.argv[2] ?? 18_422);
const upstream = new Pool(process.argv[3] ?? 'http://127.0.0.1:18420', { connections: 128, pipelining: 1 });
const keys = new Map([[process.argv[4] ?? 'sk-bench', { organization: 'org_bench', requestsPerMinute: 1_000_000_000 }]]);
const UPSTREAM_MODEL = 'bench-model';

const requestCounts = new Map<string, { minute: number; count: number }>();
const usage: Array<{ key: string; model: string; input: number; output: number }> = [];

function fail(response: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', code: null, param: null } });
  response.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

function admitted(key: string, limit: number): boolean {
  const minute = Math.floor(Date.now() / 60_000);
  const counter = requestCounts.get(key);
  if (counter === undefined || counter.minute !== minute) {
    requestCounts.set(key, { minute, count: 1 });
    return true;
  }
  counter.count++;
  return counter.count <= limit;
}

function record(key: string, model: string, figures: { prompt_tokens?: number; completion_tokens?: number } | undefined): void {
  usage.push({ key, model, input: figures?.prompt_tokens ?? 0, output: figures?.completion_tokens ?? 0 });
  if (usage.length > 10_000) usage.length = 0;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

interface ChatRequest {
  model: string;
  messages: Array<{ role: string; content: string }>;
  max_tokens?: number;
  stream?: boolean;
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const authorization = request.headers.authorization ?? '';
  const key = authorization.startsWith('Bearer ') ? authorization.slice(7) : '';
  const account = keys.get(key);
  if (account === undefined) return fail(response, 401, 'Invalid API key.');
  if (!admitted(key, account.requestsPerMinute)) return fail(response, 429, 'Rate limit reached.');
  let body: ChatRequest;
  try {
    body = JSON.parse(await readBody(request)) as ChatRequest;
  } catch {
    return fail(response, 400, 'The body is not JSON.');
  }
  if (typeof body.model !== 'string' || !Array.isArray(body.messages)) return fail(response, 400, "'model' and 'messages' are required.");
  const stream = body.stream === true;
  const upstreamBody = {
    model: UPSTREAM_MODEL,
    messages: body.messages.map((message) => ({ role: message.role, content: message.content })),
    ...(body.max_tokens === undefined ? {} : { max_tokens: body.max_tokens }),
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  };
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  const answer = await upstream.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' },
    body: JSON.stringify(upstreamBody),
    signal: controller.signal,
  });
  // Switchyard's own id makers (a pooled CSPRNG for the answer id, a counter for the request id).
  const id = newId.chatCompletion();
  const requestId = newId.request();
  if (answer.statusCode !== 200) {
    await answer.body.dump();
    return fail(response, 502, 'The upstream failed.');
  }
  if (!stream) {
    const completion = (await answer.body.json()) as {
      created: number;
      choices: Array<{ message: { content: string | null }; finish_reason: string }>;
      usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    };
    const choice = completion.choices[0]!;
    record(key, body.model, completion.usage);
    const out = JSON.stringify({
      id,
      object: 'chat.completion',
      created: completion.created,
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: choice.message.content, refusal: null },
          logprobs: null,
          finish_reason: choice.finish_reason,
        },
      ],
      usage: completion.usage,
      _metadata: { request_id: requestId, organization: account.organization },
    });
    response.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId }).end(out);
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': requestId });
  const created = Math.floor(Date.now() / 1000);
  const prefix = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(body.model)},"choices":`;
  const head = `${prefix}[{"index":0,"delta":`;
  const tail = ',"logprobs":null,"finish_reason":null}]}';
  let carry = '';
  for await (const bytes of answer.body) {
    const text = carry + (bytes as Buffer).toString('utf8');
    const events = text.split('\n\n');
    carry = events.pop() ?? '';
    let out = '';
    for (const event of events) {
      if (!event.startsWith('data: ')) continue;
      const data = event.slice(6);
      if (data === '[DONE]') {
        out += 'data: [DONE]\n\n';
        continue;
      }
      const chunk = JSON.parse(data) as {
        choices: Array<{ delta: { role?: string; content?: string }; finish_reason: string | null }>;
        usage: { prompt_tokens: number; completion_tokens: number } | null;
      };
      const choice = chunk.choices[0];
      if (choice !== undefined) {
        if (choice.finish_reason !== null) out += `data: ${head}{},"logprobs":null,"finish_reason":"${choice.finish_reason}"}]}\n\n`;
        else if (choice.delta.role !== undefined) out += `data: ${head}{"role":"assistant","content":""}${tail}\n\n`;
        else if (choice.delta.content !== undefined) out += `data: ${head}{"content":${JSON.stringify(choice.delta.content)}}${tail}\n\n`;
      }
      if (chunk.usage !== null) {
        record(key, body.model, chunk.usage);
        out += `data: ${prefix}[],"usage":${JSON.stringify(chunk.usage)}}\n\n`;
      }
    }
    if (out !== '') response.write(out);
  }
  response.end();
}

createServer((request, response) => {
  handle(request, response).catch(() => {
    if (!response.headersSent) fail(response, 502, 'The upstream failed.');
    else response.end();
  });
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
