/**
 * Helpers for tests that drive client-format encoders with scripted canonical parts, the way a
 * provider would yield them.
 */
import type { IncomingMessage } from 'node:http';
import type { StreamPart } from '../../src/core/stream-parts.ts';

/** The parts as a provider stream; with `failure`, the stream throws it after the last part. */
export async function* replay(parts: StreamPart[], failure?: unknown): AsyncGenerator<StreamPart> {
  yield* parts;
  if (failure !== undefined) throw failure;
}

/** The JSON body of a request received by a test server. */
export async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}
