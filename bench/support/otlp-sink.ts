/**
 * A local OTLP/HTTP trace sink for the benchmarks: accepts `POST /v1/traces`, reads the body and
 * discards it, answers 200 `{}` as a collector does, and counts what it received (printed on SIGTERM).
 * Run: `node --import tsx bench/support/otlp-sink.ts <port>`.
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 18_430);
let exports = 0;
let bytes = 0;

const server = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => (bytes += chunk.length));
  request.on('end', () => {
    exports++;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{}');
  });
});
server.listen(port, '127.0.0.1', () => console.log(`otlp sink listening on ${port}`));
process.on('SIGTERM', () => {
  console.log(`otlp sink: ${exports} exports, ${bytes} bytes`);
  server.close();
  process.exit(0);
});
