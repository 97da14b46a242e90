/**
 * Baseline: raw node:http answering every request with one constant JSON body. Started as a child
 * process by the benchmarks (`node --import tsx bench/support/constant-server.ts <port> <file>`).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 18_410);
const body = process.argv[3] === undefined ? '{"object":"list","data":[]}' : readFileSync(process.argv[3], 'utf8');
createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
