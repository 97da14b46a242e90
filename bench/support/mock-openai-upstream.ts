/**
 * A fast OpenAI-compatible upstream for benchmarks: answers POST /v1/chat/completions with a fixed
 * completion, as JSON or as an SSE stream of `chunks` text deltas (real wire format, recorded shape).
 * Run: `node --import tsx bench/support/mock-openai-upstream.ts <port> [chunks] [spaced]`.
 *
 * `spaced`: a stream is written one event at a time, the next after `setImmediate`, so that events
 * leave in their own TCP segments and a gateway reads them one by one, as it reads a real model's
 * tokens (which arrive milliseconds apart). Without it the whole stream is one write.
 */
import { createServer, type ServerResponse } from 'node:http';
import { cannedChatAnswer } from './canned-chat-answer.ts';

const port = Number(process.argv[2] ?? 18_420);
const chunkCount = Number(process.argv[3] ?? 20);
const spaced = process.argv[4] === 'spaced';
const { completion, stream } = cannedChatAnswer(chunkCount, Math.floor(Date.now() / 1000));

/** The stream's events, each with its blank line, for `spaced`. */
const events = stream.split(/(?<=\n\n)/);

function writeSpaced(response: ServerResponse, all: string[], index: number): void {
  if (response.destroyed) return;
  if (index === all.length - 1) {
    response.end(all[index]);
    return;
  }
  response.write(all[index]);
  setImmediate(writeSpaced, response, all, index + 1);
}

createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    const streaming = Buffer.concat(parts).includes('"stream":true');
    if (streaming) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      if (spaced) writeSpaced(response, events, 0);
      else response.end(stream);
    } else {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
      response.end(completion);
    }
  });
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
