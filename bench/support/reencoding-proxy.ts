/**
 * Baseline for the "shared shape" bench (bench/shared-shape.ts): the floor for a gateway that transforms
 * JSON, as the second, shared gateway bench defines its minimal proxy. It reads the body, checks a bearer
 * key, parses the request and encodes it again with the upstream's model name, calls the upstream through
 * an undici Pool, parses the JSON answer, sets the model and a `_metadata` object, encodes it and answers
 * in one write. Streams are piped through untouched. Costs more than support/passthrough-proxy.ts, which
 * parses nothing.
 * Run: `node --import tsx bench/support/reencoding-proxy.ts <port> <upstream origin> <key>`.
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.argv[2] ?? 18_441);
const upstream = new Pool(process.argv[3] ?? 'http://127.0.0.1:18440', { connections: 128 });
const expected = `Bearer ${process.argv[4] ?? 'sk-bench'}`;

createServer(async (request, response) => {
  try {
    const parts: Buffer[] = [];
    for await (const part of request) parts.push(part as Buffer);
    if (request.headers.authorization !== expected) {
      response.writeHead(401);
      response.end();
      return;
    }
    const body = JSON.parse(Buffer.concat(parts).toString()) as { model: string; stream?: boolean };
    const answer = await upstream.request({
      method: 'POST',
      path: request.url ?? '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model: 'up-model' }),
    });
    if (body.stream === true) {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for await (const part of answer.body) response.write(part);
      response.end();
      return;
    }
    const data = (await answer.body.json()) as Record<string, unknown>;
    data['model'] = body.model;
    data['_metadata'] = { creator: 'bench', status: true, timestamp: new Date().toISOString() };
    const out = JSON.stringify(data);
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    response.end(out);
  } catch {
    if (!response.headersSent) response.writeHead(502);
    response.end();
  }
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
