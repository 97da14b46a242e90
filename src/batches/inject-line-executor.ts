/**
 * Runs a batch line through the app's own route in-process (Fastify inject), on behalf of the key
 * that created the batch and marked as a batch call, so validation, limits, metering (50% price) and
 * encoders are exactly those of the synchronous path.
 */
import type { FastifyInstance } from 'fastify';
import type { InternalCalls } from '../http/internal-calls.ts';
import type { LineExecutor } from './batch-worker.ts';

export function injectLineExecutor(app: FastifyInstance, internalCalls: InternalCalls): LineExecutor {
  return async ({ keyId, url, body }) => {
    const response = await app.inject({
      method: 'POST',
      url,
      payload: body,
      headers: { 'content-type': 'application/json', ...internalCalls.headersFor({ keyId, batch: true }) },
    });
    return { statusCode: response.statusCode, headers: response.headers, body: response.body };
  };
}
