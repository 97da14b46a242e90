/**
 * A fast OpenAI-compatible upstream for benchmarks: answers POST /v1/chat/completions with a fixed
 * completion, as JSON or as an SSE stream of `chunks` text deltas (real wire format, recorded shape).
 * Run: `node --import tsx bench/support/mock-openai-upstream.ts <port> [chunks]`.
 */
import { createServer } from 'node:http';
import { cannedChatAnswer } from './canned-chat-answer.ts';

const port = Number(process.argv[2] ?? 18_420);
const chunkCount = Number(process.argv[3] ?? 20);
const { completion, stream } = cannedChatAnswer(chunkCount, Math.floor(Date.now() / 1000));

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
