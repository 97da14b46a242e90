/**
 * Floor for the gateway benchmarks: a server that reads a JSON POST body, parses it and answers the
 * mock upstream's canned chat completion, with nothing else. `http`: raw node:http; `fastify`: a bare
 * Fastify app (its JSON body parser and reply serialiser, no hooks or plugins).
 * Run: `node --import tsx bench/support/minimal-json-server.ts <port> http|fastify`.
 */
import { createServer } from 'node:http';
import Fastify from 'fastify';
import { cannedChatAnswer } from './canned-chat-answer.ts';

const port = Number(process.argv[2] ?? 18_430);
const kind = process.argv[3] ?? 'http';
const { completion } = cannedChatAnswer(20, Math.floor(Date.now() / 1000));

if (kind === 'http') {
  createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      JSON.parse(Buffer.concat(parts).toString('utf8'));
      const body = JSON.stringify(JSON.parse(completion));
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      response.end(body);
    });
  }).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
} else {
  const app = Fastify();
  app.post('/v1/chat/completions', async () => JSON.parse(completion) as unknown);
  await app.listen({ port, host: '127.0.0.1' });
  console.log(`listening on ${port}`);
}
