import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamHttpClient } from '../../../src/providers/shared/http-client.ts';
import {
  OpenAICompatibleModerationModel,
  mapOpenAIModerationResult,
} from '../../../src/providers/openai-compatible/openai-compatible-moderation-model.ts';
import { MockOpenAIServer } from '../../support/mock-upstreams/index.ts';

const upstream = new MockOpenAIServer();
let client: UpstreamHttpClient;
const options = () => ({ signal: new AbortController().signal });

before(async () => {
  await upstream.start();
  client = new UpstreamHttpClient({ baseUrl: upstream.baseUrl, timeoutMs: 5_000 });
});
beforeEach(() => upstream.reset());
after(async () => {
  await client.close();
  await upstream.close();
});

/** An OpenAI omni-moderation result (fields as in the API reference). */
const violentResult = {
  flagged: true,
  categories: {
    harassment: true,
    'harassment/threatening': true,
    hate: false,
    'hate/threatening': false,
    illicit: false,
    'self-harm': false,
    'self-harm/intent': false,
    'self-harm/instructions': false,
    sexual: false,
    'sexual/minors': false,
    violence: false,
    'violence/graphic': true,
  },
  category_scores: {
    harassment: 0.8,
    hate: 0.01,
    'hate/threatening': 0.2,
    'self-harm': 0.001,
    'self-harm/intent': 0.002,
    'self-harm/instructions': 0.0001,
    sexual: 0.003,
    'sexual/minors': 0.0002,
    violence: 0.7,
    'violence/graphic': 0.91,
  },
};

describe('OpenAICompatibleModerationModel', () => {
  test('maps OpenAI category families onto the four SPEC categories', () => {
    assert.deepEqual(mapOpenAIModerationResult(violentResult), {
      flagged: true,
      categories: { hate: false, 'self-harm': false, sexual: false, violence: true },
      categoryScores: { hate: 0.2, 'self-harm': 0.002, sexual: 0.003, violence: 0.91 },
    });
  });

  test('a result flagged only outside the four categories is not flagged here', () => {
    const verdict = mapOpenAIModerationResult({ flagged: true, categories: { harassment: true }, category_scores: { harassment: 0.9 } });
    assert.equal(verdict.flagged, false);
  });

  test('sends {model, input[]} to /moderations and returns one verdict per input', async () => {
    upstream.enqueue({
      type: 'json',
      body: {
        id: 'modr-upstream',
        model: 'omni-moderation-latest',
        results: [violentResult, { flagged: false, categories: {}, category_scores: {} }],
      },
    });
    const model = new OpenAICompatibleModerationModel(client, { upstreamModel: 'omni-moderation-latest', headers: {} });
    const verdicts = await model.classify(['I will hurt you', 'hello'], options());
    assert.deepEqual(upstream.requests[0]!.body, { model: 'omni-moderation-latest', input: ['I will hurt you', 'hello'] });
    assert.equal(upstream.requests[0]!.path, '/v1/moderations');
    assert.deepEqual(
      verdicts.map((verdict) => verdict.flagged),
      [true, false],
    );
  });

  test('errors and short replies are mapped', async () => {
    const model = new OpenAICompatibleModerationModel(client, { upstreamModel: 'm', headers: {} });
    upstream.enqueue({ type: 'error', status: 401, message: 'bad key' });
    await assert.rejects(model.classify(['x'], options()), { status: 500, code: 'service_unavailable' });
    upstream.enqueue({ type: 'json', body: { results: [] } });
    await assert.rejects(model.classify(['x'], options()), { status: 500 });
    assert.deepEqual(await model.classify([], options()), []);
  });
});
