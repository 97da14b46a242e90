// POST /v1/embeddings end to end: a real server, the official openai SDK, the built-in Universal
// Sentence Encoder, and an OpenAI-compatible mock upstream.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { MockOpenAIServer, type RecordedRequest } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const BUILTIN = 'switchyard-embeddings';
const VIA_UPSTREAM = 'mock-embeddings';

async function rawPost(server: TestServer, path: string, body: unknown, key = server.key): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

function cosine(left: number[], right: number[]): number {
  let dot = 0;
  for (let index = 0; index < left.length; index++) dot += left[index]! * right[index]!;
  return dot / (Math.hypot(...left) * Math.hypot(...right));
}

/** The mock upstream's /v1/embeddings: a 4-value vector per input, usage 3 tokens per input. */
function upstreamEmbeddings(request: RecordedRequest) {
  const input = (request.body as { input: string[] }).input;
  return {
    type: 'json' as const,
    body: {
      object: 'list',
      data: input.map((text, index) => ({ object: 'embedding', index, embedding: [text.length, 0.25, -0.5, index] })),
      model: 'upstream-embed',
      usage: { prompt_tokens: input.length * 3, total_tokens: input.length * 3 },
    },
  };
}

describe('embeddings end to end', () => {
  const upstream = new MockOpenAIServer();
  let server: TestServer;
  let client: OpenAI;

  before(async () => {
    await upstream.start();
    server = await startTestServer({
      config: {
        providers: { mock: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [
          { id: VIA_UPSTREAM, provider: 'mock', upstreamModel: 'upstream-embed', capabilities: ['embeddings'], contextWindow: 8191 },
        ],
      },
    });
    client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
  });
  beforeEach(() => upstream.reset());
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('embeddings.create with and without encoding_format: the SDK decodes base64 to the same vectors', async () => {
    const input = ['The cat sat on the mat.', 'A kitten rested on the rug.', 'Quarterly revenue grew by ten percent.'];
    const viaBase64 = await client.embeddings.create({ model: BUILTIN, input });
    const viaFloat = await client.embeddings.create({ model: BUILTIN, input, encoding_format: 'float' });
    assert.equal(viaBase64.object, 'list');
    assert.equal(viaBase64.model, BUILTIN);
    assert.equal(viaBase64.data.length, 3);
    assert.deepEqual(
      viaBase64.data.map((item) => [item.object, item.index, item.embedding.length]),
      [
        ['embedding', 0, 512],
        ['embedding', 1, 512],
        ['embedding', 2, 512],
      ],
    );
    viaBase64.data.forEach((item, index) => assert.deepEqual(item.embedding, viaFloat.data[index]!.embedding));
    assert.ok(viaFloat.usage.prompt_tokens > 10);
    assert.equal(viaFloat.usage.total_tokens, viaFloat.usage.prompt_tokens);
    // The paraphrase is closer than the unrelated sentence.
    const [cat, kitten, revenue] = viaFloat.data.map((item) => item.embedding);
    assert.ok(cosine(cat!, kitten!) > cosine(cat!, revenue!));
  });

  test('the raw body: base64 on the wire, _metadata; no model means the first embedding model of the catalogue', async () => {
    const explicit = await rawPost(server, '/v1/embeddings', { model: BUILTIN, input: 'hello', encoding_format: 'base64' });
    assert.equal(explicit.status, 200);
    assert.equal(typeof explicit.body.data[0].embedding, 'string');
    assert.equal(Buffer.from(explicit.body.data[0].embedding, 'base64').length, 512 * 4);
    assert.equal(explicit.body._metadata.status, true);
    // No model: the first catalogue model with the capability (configured models come before the built-in ones).
    upstream.enqueue(upstreamEmbeddings);
    const defaulted = await rawPost(server, '/v1/embeddings', { input: 'hello' });
    assert.equal(defaulted.status, 200);
    assert.equal(defaulted.body.model, VIA_UPSTREAM);
    assert.deepEqual(defaulted.body.data[0].embedding, [5, 0.25, -0.5, 0]);
  });

  test('through an OpenAI-compatible upstream: request, order and usage are passed through', async () => {
    upstream.enqueue(upstreamEmbeddings);
    const result = await client.embeddings.create({
      model: VIA_UPSTREAM,
      input: ['a', 'bb', 'ccc'],
      encoding_format: 'float',
      dimensions: 4,
    });
    assert.deepEqual(
      result.data.map((item) => item.embedding),
      [
        [1, 0.25, -0.5, 0],
        [2, 0.25, -0.5, 1],
        [3, 0.25, -0.5, 2],
      ],
    );
    assert.deepEqual(result.usage, { prompt_tokens: 9, total_tokens: 9 });
    assert.equal(result.model, VIA_UPSTREAM);
    assert.deepEqual(upstream.requests[0]!.body, {
      model: 'upstream-embed',
      input: ['a', 'bb', 'ccc'],
      encoding_format: 'float',
      dimensions: 4,
    });
  });

  test('client mistakes are 400s naming the field, as BadRequestError', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: BUILTIN, input: '' }, 'input'],
      [{ model: BUILTIN, input: [] }, 'input'],
      [{ model: BUILTIN, input: ['ok', 'fine', 'sure', ''] }, 'input[3]'],
      [{ model: BUILTIN, input: [[1, 2, 3]] }, 'input'],
      [{ model: BUILTIN, input: Array.from({ length: 2049 }, () => 'x') }, 'input'],
      [{ model: BUILTIN, input: ['short', 'word '.repeat(3000)] }, 'input[1]'],
      [{ model: BUILTIN, input: 'x', encoding_format: 'int8' }, 'encoding_format'],
      [{ model: BUILTIN, input: 'x', dimensions: 4096 }, 'dimensions'],
      [{ model: 'switchyard-echo', input: 'x' }, 'model'],
    ];
    for (const [body, param] of cases) {
      const raw = await rawPost(server, '/v1/embeddings', body);
      assert.equal(raw.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(raw.body.error.type, 'invalid_request_error');
      assert.equal(raw.body.error.param, param, JSON.stringify(body).slice(0, 80));
      assert.equal(raw.body.info_metadata.status, false);
    }
    await assert.rejects(client.embeddings.create({ model: BUILTIN, input: '' }), OpenAI.BadRequestError);
  });

  test('error classes: unknown model, no key, no permission, upstream failures', async () => {
    // SPEC lists 400 (not 404) for this endpoint: in the default `spec` validation an unknown model is invalid_parameter.
    await assert.rejects(client.embeddings.create({ model: 'no-such-model', input: 'x' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.deepEqual([error.code, error.param], ['invalid_parameter', 'model']);
      return true;
    });
    await assert.rejects(
      new OpenAI({ apiKey: 'sk-wrong', baseURL: server.baseUrl, maxRetries: 0 }).embeddings.create({ model: BUILTIN, input: 'x' }),
      OpenAI.AuthenticationError,
    );
    const chatOnly = await server.createKey({ permissions: ['chat.completions'] });
    await assert.rejects(
      new OpenAI({ apiKey: chatOnly.key, baseURL: server.baseUrl, maxRetries: 0 }).embeddings.create({ model: BUILTIN, input: 'x' }),
      OpenAI.PermissionDeniedError,
    );
    upstream.enqueue({ type: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '1' } });
    await assert.rejects(client.embeddings.create({ model: VIA_UPSTREAM, input: 'x' }), OpenAI.RateLimitError);
    upstream.enqueue({ type: 'error', status: 503, message: 'overloaded' });
    await assert.rejects(client.embeddings.create({ model: VIA_UPSTREAM, input: 'x' }), OpenAI.InternalServerError);
  });
});
