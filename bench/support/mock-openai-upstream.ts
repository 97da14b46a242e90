/**
 * A fast OpenAI-compatible upstream for benchmarks: answers POST /v1/chat/completions with a fixed
 * completion, as JSON or as an SSE stream of `chunks` text deltas (real wire format, recorded shape).
 * Run: `node --import tsx bench/support/mock-openai-upstream.ts <port> [chunks]`.
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 18_420);
const chunkCount = Number(process.argv[3] ?? 20);
const created = Math.floor(Date.now() / 1000);
const words = Array.from({ length: chunkCount }, (_, index) => (index === 0 ? 'Hello' : ` word${index}`));

const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created,
  model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: words.join(''), refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: chunkCount, total_tokens: 12 + chunkCount },
});

const chunk = (delta: Record<string, unknown>, finishReason: string | null, usage: unknown = null): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'bench-model', choices: usage === null ? [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] : [], usage })}\n\n`;

const stream =
  chunk({ role: 'assistant', content: '' }, null) +
  words.map((word) => chunk({ content: word }, null)).join('') +
  chunk({}, 'stop') +
  chunk({}, null, { prompt_tokens: 12, completion_tokens: chunkCount, total_tokens: 12 + chunkCount }) +
  'data: [DONE]\n\n';

createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    const streaming = Buffer.concat(parts).includes('"stream":true');
    if (streaming) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.end(stream);
    } else {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
      response.end(completion);
    }
  });
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
