/**
 * `reply.sendAnswer`: a use case's answer reaches the client with its headers and `_metadata` built
 * from its admission's figures (JSON), through the SSE writer (events) or as raw bytes (content), and the
 * edge's safety net settles an admission the answer left unsettled. A use case's failure after its
 * admission (`AnswerFailure`) is answered in the SPEC envelope with that admission's headers and figures.
 * Nothing is parked on the request.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import type { AuthContext, Authenticator } from '../../src/accounts/authenticator.ts';
import { installEdge } from '../../src/http/edge.ts';
import { HttpMetrics } from '../../src/http/metrics.ts';
import '../../src/http/request-context.ts';
import type { SseEvent } from '../../src/core/sse-event.ts';
import { emptyUsage } from '../../src/core/usage.ts';
import { AnswerFailure, type Answer } from '../../src/services/answer.ts';
import { notFound } from '../../src/core/service-error.ts';
import type { Admission } from '../../src/services/metering/metering-service.ts';

const auth: AuthContext = {
  keyId: 'key_edge',
  organizationId: 'org-edge',
  tier: 'Developer',
  permissions: new Set(['chat.completions'] as const),
  expiresAt: null,
};
const TOTAL_USAGE = { limit: 100, used: 7, remaining: 93, reset_at: '2026-12-01T00:00:00.000Z' };

/** An admission that records its settlement (the edge only reads these members). */
function fakeAdmission(): Admission & { settledWith: unknown[] } {
  const state = { settled: false, settledWith: [] as unknown[] };
  return {
    headers: { 'x-ratelimit-limit-requests': '10' },
    totalUsage: TOTAL_USAGE,
    get isSettled() {
      return state.settled;
    },
    settledWith: state.settledWith,
    async settle(usage: unknown) {
      state.settled = true;
      state.settledWith.push(usage);
    },
  } as unknown as Admission & { settledWith: unknown[] };
}

async function appAnswering(answer: () => Answer | Promise<Answer>) {
  const app = Fastify();
  installEdge(app, {
    operator: 'test-operator',
    usage: { read: async () => ({ total: TOTAL_USAGE }) as never },
    authenticator: { authenticateCached: () => auth, authenticate: async () => auth } as unknown as Authenticator,
    metrics: new HttpMetrics(false),
    keepAliveSeconds: 15,
  });
  app.post('/v1/answer', { config: { switchyard: { permission: 'chat.completions', limits: 'tokens' } } }, async (_request, reply) =>
    reply.sendAnswer(await answer()),
  );
  await app.ready();
  return app;
}

describe('reply.sendAnswer', () => {
  test('a JSON answer: its headers, _metadata from its admission, and an unsettled admission settled when the response ends', async () => {
    const admission = fakeAdmission();
    const app = await appAnswering(() => ({
      stream: false,
      body: { object: 'test' },
      headers: { ...admission.headers, 'x-extra': 'yes' },
      admission,
    }));
    const response = await app.inject({ method: 'POST', url: '/v1/answer', headers: { authorization: 'Bearer sk-test' }, payload: {} });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['x-extra'], 'yes');
    assert.equal(response.headers['x-ratelimit-limit-requests'], '10');
    const body = response.json();
    assert.equal(body.object, 'test');
    assert.equal(body._metadata.status, true);
    assert.deepEqual(body._metadata.user_total_usage, TOTAL_USAGE);
    assert.equal(admission.isSettled, true, 'the safety net settled the admission');
    assert.deepEqual(admission.settledWith, [undefined]);
    await app.close();
  });

  test('an events answer goes through the SSE writer with its headers; its admission is settled at the end', async () => {
    const admission = fakeAdmission();
    async function* events(): AsyncGenerator<SseEvent> {
      yield { data: '{"a":1}' };
    }
    const app = await appAnswering(() => ({ stream: true, events: events(), headers: { 'x-extra': 'stream' }, admission }));
    const response = await app.inject({ method: 'POST', url: '/v1/answer', headers: { authorization: 'Bearer sk-test' }, payload: {} });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['x-extra'], 'stream');
    assert.match(response.headers['content-type'] as string, /text\/event-stream/);
    assert.match(response.body, /data: \{"a":1\}/);
    assert.equal(admission.isSettled, true);
    await app.close();
  });

  test('a settled admission is left alone', async () => {
    const admission = fakeAdmission();
    await admission.settle({ ...emptyUsage(), inputTokens: 3 });
    const app = await appAnswering(() => ({ stream: false, body: {}, headers: {}, admission }));
    await app.inject({ method: 'POST', url: '/v1/answer', headers: { authorization: 'Bearer sk-test' }, payload: {} });
    assert.deepEqual(admission.settledWith, [{ ...emptyUsage(), inputTokens: 3 }]);
    await app.close();
  });

  test('a content answer: its raw bytes, media type and headers, no _metadata; its open admission settled', async () => {
    const admission = fakeAdmission();
    const app = await appAnswering(() => ({
      stream: false,
      content: { mediaType: 'text/plain', bytes: 5, data: Readable.from([Buffer.from('hello')]) },
      headers: { 'x-content-type-options': 'nosniff' },
      admission,
    }));
    const response = await app.inject({ method: 'POST', url: '/v1/answer', headers: { authorization: 'Bearer sk-test' }, payload: {} });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, 'hello');
    assert.match(String(response.headers['content-type']), /^text\/plain/);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['x-ratelimit-limit-requests'], undefined, 'the bytes carry only the answer headers');
    assert.equal(admission.isSettled, true);
    await app.close();
  });

  test('a failure after the admission: the SPEC envelope with the admission headers and its usage figures', async () => {
    const admission = fakeAdmission();
    const app = await appAnswering(async () => {
      throw new AnswerFailure(notFound('file_not_found', 'No such file.', 'file_id'), admission);
    });
    const response = await app.inject({ method: 'POST', url: '/v1/answer', headers: { authorization: 'Bearer sk-test' }, payload: {} });
    assert.equal(response.statusCode, 404);
    assert.equal(response.headers['x-ratelimit-limit-requests'], '10');
    const body = response.json();
    assert.equal(body.error.code, 'file_not_found');
    assert.equal(body.error.param, 'file_id');
    assert.equal(body.info_metadata.status, false);
    assert.deepEqual(body.info_metadata.user_total_usage, TOTAL_USAGE);
    await app.close();
  });
});
