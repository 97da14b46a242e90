import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamError } from '../../../src/core/upstream-error.ts';
import { UpstreamHttpClient } from '../../../src/providers/shared/http-client.ts';
import {
  OpenAICompatibleEmbeddingModel,
  decodeBase64Embedding,
} from '../../../src/providers/openai-compatible/openai-compatible-embedding-model.ts';
import { MockOpenAIServer, type RecordedRequest } from '../../support/mock-upstreams/index.ts';

/** A fake but checkable vector for a text: [length, first char code, position marker]. */
function vectorFor(text: string): number[] {
  return [text.length, text.charCodeAt(0), 0.5];
}

/** Answers like OpenAI /v1/embeddings, with data items in REVERSE order (the index field must be used). */
function embeddingsReply(request: RecordedRequest, options: { usage?: boolean; base64?: boolean } = {}) {
  const body = request.body as { input: string[] };
  const data = body.input.map((text, index) => ({
    object: 'embedding',
    index,
    embedding: options.base64 ? Buffer.from(Float32Array.from(vectorFor(text)).buffer).toString('base64') : vectorFor(text),
  }));
  return {
    type: 'json' as const,
    body: {
      object: 'list',
      data: data.reverse(),
      model: 'text-embedding-3-small',
      ...(options.usage === false ? {} : { usage: { prompt_tokens: body.input.length * 2, total_tokens: body.input.length * 2 } }),
    },
  };
}

const upstream = new MockOpenAIServer();
let client: UpstreamHttpClient;
const options = () => ({ signal: new AbortController().signal });

before(async () => {
  await upstream.start();
  client = new UpstreamHttpClient({ baseUrl: upstream.baseUrl, timeoutMs: 5_000, apiKey: 'sk-test-secret-key' });
});
beforeEach(() => upstream.reset());
after(async () => {
  await client.close();
  await upstream.close();
});

describe('OpenAICompatibleEmbeddingModel', () => {
  test('sends the OpenAI request and maps the reply by index', async () => {
    upstream.enqueue((request) => embeddingsReply(request));
    const model = new OpenAICompatibleEmbeddingModel(client, {
      upstreamModel: 'text-embedding-3-small',
      headers: { authorization: 'Bearer sk-test-secret-key' },
    });
    const result = await model.embed(['alpha', 'be'], { ...options(), dimensions: 3, requestId: 'req_1' });
    assert.deepEqual(result, { embeddings: [vectorFor('alpha'), vectorFor('be')], inputTokens: 4, estimated: false });
    const [request] = upstream.requests;
    assert.equal(request!.path, '/v1/embeddings');
    assert.deepEqual(request!.body, { model: 'text-embedding-3-small', input: ['alpha', 'be'], encoding_format: 'float', dimensions: 3 });
    assert.equal(request!.headers['authorization'], 'Bearer sk-test-secret-key');
    assert.equal(request!.headers['x-request-id'], 'req_1');
  });

  test('splits large arrays into upstream-sized batches and keeps input order', async () => {
    for (let index = 0; index < 4; index++) upstream.enqueue((request) => embeddingsReply(request));
    const model = new OpenAICompatibleEmbeddingModel(client, { upstreamModel: 'e', headers: {}, maxBatchSize: 3, maxConcurrentBatches: 2 });
    const inputs = Array.from({ length: 10 }, (_, index) => `${String.fromCharCode(97 + index)}${'x'.repeat(index)}`);
    const result = await model.embed(inputs, options());
    assert.equal(model.maxBatchSize, 3);
    assert.deepEqual(result.embeddings, inputs.map(vectorFor));
    assert.equal(result.inputTokens, 20);
    assert.deepEqual(upstream.requests.map((request) => (request.body as { input: string[] }).input.length).sort(), [1, 3, 3, 3]);
  });

  test('base64 replies are decoded; missing usage is counted locally and marked estimated', async () => {
    upstream.enqueue((request) => embeddingsReply(request, { base64: true, usage: false }));
    const model = new OpenAICompatibleEmbeddingModel(client, { upstreamModel: 'e', headers: {} });
    const result = await model.embed(['hello world'], options());
    assert.deepEqual(result.embeddings, [vectorFor('hello world').map(Math.fround)]);
    assert.equal(result.estimated, true);
    assert.ok(result.inputTokens >= 2);
  });

  test('decodeBase64Embedding reads little-endian float32', () => {
    assert.deepEqual(decodeBase64Embedding(Buffer.from([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]).toString('base64')), [1, -2]);
  });

  test('upstream errors are mapped like the other providers, without leaking the key', async () => {
    const model = new OpenAICompatibleEmbeddingModel(client, { upstreamModel: 'e', headers: {} });
    upstream.enqueue({
      type: 'error',
      status: 400,
      message: "This model's maximum context length is 8192 tokens (key sk-test-secret-key)",
    });
    const badRequest = await model.embed(['x'], options()).catch((error: unknown) => error);
    assert.ok(badRequest instanceof UpstreamError);
    assert.equal(badRequest.status, 400);
    assert.doesNotMatch(badRequest.message, /sk-test-secret-key/);

    upstream.enqueue({ type: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '2' } });
    await assert.rejects(model.embed(['x'], options()), { status: 429, type: 'rate_limit_exceeded' });

    upstream.enqueue({ type: 'error', status: 503, message: 'overloaded' });
    await assert.rejects(model.embed(['x'], options()), { status: 500, code: 'service_unavailable' });

    upstream.enqueue({ type: 'json', body: { data: [] } });
    await assert.rejects(model.embed(['x', 'y'], options()), { status: 500, code: 'service_unavailable' });

    upstream.enqueue({ type: 'raw', status: 200, body: 'not json' });
    await assert.rejects(model.embed(['x'], options()), { status: 500 });
  });

  test('one failed batch fails the call', async () => {
    upstream.enqueue((request) => embeddingsReply(request), { type: 'error', status: 500, message: 'boom' });
    const model = new OpenAICompatibleEmbeddingModel(client, { upstreamModel: 'e', headers: {}, maxBatchSize: 1, maxConcurrentBatches: 1 });
    await assert.rejects(model.embed(['a', 'b', 'c'], options()), { status: 500 });
  });
});
