/**
 * Baseline for the gateway benchmarks: the minimal pass-through proxy a gateway could be. It forwards
 * the request body to the upstream with an undici Pool (keep-alive) and pipes the answer back, with no
 * auth, no parsing, no translation, no metering.
 * Run: `node --import tsx bench/support/passthrough-proxy.ts <port> <upstream origin>`.
 */
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const port = Number(process.argv[2] ?? 18_421);
const upstream = new Pool(process.argv[3] ?? 'http://127.0.0.1:18420', { connections: 128, pipelining: 1 });

createServer(async (request, response) => {
  try {
    const parts: Buffer[] = [];
    for await (const part of request) parts.push(part as Buffer);
    const answer = await upstream.request({
      method: 'POST',
      path: request.url ?? '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat(parts),
    });
    const contentType = answer.headers['content-type'];
    response.writeHead(answer.statusCode, typeof contentType === 'string' ? { 'content-type': contentType } : {});
    await pipeline(answer.body, response);
  } catch {
    if (!response.headersSent) response.writeHead(502);
    response.end();
  }
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
