// POST /v1/moderations end to end: a real server, the official openai SDK, the built-in classifier,
// and an OpenAI-compatible mock upstream.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const BUILTIN = 'switchyard-moderation';
const VIA_UPSTREAM = 'mock-moderation';

async function rawPost(server: TestServer, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.origin}/v1/moderations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.key}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

describe('moderations end to end', () => {
  const upstream = new MockOpenAIServer();
  let server: TestServer;
  let client: OpenAI;

  before(async () => {
    await upstream.start();
    server = await startTestServer({
      config: {
        providers: { mock: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [{ id: VIA_UPSTREAM, provider: 'mock', upstreamModel: 'omni-moderation-latest', capabilities: ['moderation'] }],
      },
    });
    client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
  });
  beforeEach(() => upstream.reset());
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('moderations.create with the built-in classifier: SPEC result, one per input', async () => {
    const result = await client.moderations.create({
      model: BUILTIN,
      input: ['I am going to stab him in the neck tonight.', 'How do I kill a zombie process in Linux?'],
    });
    assert.match(result.id, /^modr-/);
    assert.equal(result.model, BUILTIN);
    assert.equal(result.results.length, 2);
    const [violent, benign] = result.results;
    assert.equal(violent!.flagged, true);
    assert.equal(violent!.categories.violence, true);
    assert.equal(benign!.flagged, false);
    for (const item of result.results) {
      assert.deepEqual(Object.keys(item.categories), ['hate', 'self-harm', 'sexual', 'violence']);
      for (const score of Object.values(item.category_scores)) assert.ok(score >= 0 && score <= 1);
    }
  });

  test('a single string, with _metadata; no model means the first moderation model of the catalogue', async () => {
    const raw = await rawPost(server, { model: BUILTIN, input: 'Have a lovely day!' });
    assert.equal(raw.status, 200);
    assert.equal(raw.body.model, BUILTIN);
    assert.equal(raw.body.results.length, 1);
    assert.equal(raw.body.results[0].flagged, false);
    assert.equal(raw.body._metadata.status, true);
    // Configured models come before the built-in ones; on a fresh install the built-in classifier is the default.
    upstream.enqueue({ type: 'json', body: { results: [{ flagged: false, categories: {}, category_scores: {} }] } });
    const defaulted = await rawPost(server, { input: 'Have a lovely day!' });
    assert.equal(defaulted.status, 200);
    assert.equal(defaulted.body.model, VIA_UPSTREAM);
  });

  test('through an OpenAI-compatible upstream: OpenAI categories folded into the SPEC four', async () => {
    upstream.enqueue({
      type: 'json',
      body: {
        id: 'modr-up',
        model: 'omni-moderation-latest',
        results: [
          {
            flagged: true,
            categories: { 'self-harm/intent': true, harassment: false },
            category_scores: { 'self-harm': 0.7, 'self-harm/intent': 0.93, violence: 0.1 },
          },
        ],
      },
    });
    const result = await client.moderations.create({ model: VIA_UPSTREAM, input: 'upstream text' });
    assert.equal(result.model, VIA_UPSTREAM);
    assert.deepEqual(result.results[0]!.categories, { hate: false, 'self-harm': true, sexual: false, violence: false });
    assert.equal(result.results[0]!.category_scores['self-harm'], 0.93);
    assert.deepEqual(upstream.requests[0]!.body, { model: 'omni-moderation-latest', input: ['upstream text'] });
  });

  test('error classes: 400 with param, unknown model, wrong capability, permission, upstream failure', async () => {
    const missing = await rawPost(server, { model: BUILTIN });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'missing_parameter');
    assert.equal(missing.body.error.param, 'input');
    const image = await rawPost(server, { input: [{ type: 'image_url', image_url: { url: 'https://example.com/x.png' } }] });
    assert.equal(image.status, 400);
    assert.equal(image.body.error.param, 'input[0]');
    await assert.rejects(client.moderations.create({ model: BUILTIN, input: [] }), OpenAI.BadRequestError);
    await assert.rejects(client.moderations.create({ model: 'no-such-model', input: 'x' }), OpenAI.NotFoundError);
    await assert.rejects(client.moderations.create({ model: 'switchyard-embeddings', input: 'x' }), OpenAI.BadRequestError);
    const embeddingsOnly = await server.createKey({ permissions: ['embeddings'] });
    await assert.rejects(
      new OpenAI({ apiKey: embeddingsOnly.key, baseURL: server.baseUrl, maxRetries: 0 }).moderations.create({ input: 'x' }),
      OpenAI.PermissionDeniedError,
    );
    upstream.enqueue({ type: 'error', status: 500, message: 'boom' });
    await assert.rejects(client.moderations.create({ model: VIA_UPSTREAM, input: 'x' }), OpenAI.InternalServerError);
  });
});
