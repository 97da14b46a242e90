// The moderation pre-check on generation inputs: configured per tier or per model, a flagged input is
// refused with a 400 naming its field and never reaches the upstream.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const FLAGGED = 'I am going to kill you and your whole family tonight.';

describe('moderation pre-check on generation inputs', () => {
  const upstream = new MockOpenAIServer();
  let server: TestServer;

  before(async () => {
    await upstream.start();
    const permissions = ['chat.completions', 'messages', 'responses', 'models'];
    server = await startTestServer({
      config: {
        tiers: {
          Developer: { requestsPerMinute: 0, tokensPerMinute: 0, tokensPerDay: 0, tokensPerMonth: 0, concurrentBatches: 1, permissions },
          Guarded: {
            requestsPerMinute: 0,
            tokensPerMinute: 0,
            tokensPerDay: 0,
            tokensPerMonth: 0,
            concurrentBatches: 1,
            permissions,
            moderateInputs: true,
          },
        } as never,
        providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [
          { id: 'open-model', provider: 'up', capabilities: ['chat', 'streaming'] },
          { id: 'guarded-model', provider: 'up', capabilities: ['chat', 'streaming'], moderateInputs: true },
        ],
      },
    });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('a guarded tier: flagged input is a 400 naming the field and nothing is sent upstream', async () => {
    const { key } = await server.createKey({ tier: 'Guarded', organization: 'org-guarded' });
    const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    upstream.reset();
    await assert.rejects(
      client.chat.completions.create({ model: 'open-model', messages: [{ role: 'user', content: FLAGGED }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal(error.code, 'invalid_parameter');
        assert.equal(error.param, 'messages[0].content[0]');
        assert.match(error.message, /violence/);
        return true;
      },
    );
    assert.equal(upstream.requests.length, 0);
    const clean = await client.chat.completions.create({
      model: 'open-model',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
    });
    assert.equal(clean.choices[0]!.finish_reason, 'stop');
    assert.equal(upstream.requests.length, 1);
  });

  test('a guarded model refuses flagged input whatever the tier; other models do not check', async () => {
    const client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    upstream.reset();
    await assert.rejects(
      client.chat.completions.create({ model: 'guarded-model', messages: [{ role: 'user', content: FLAGGED }] }),
      OpenAI.BadRequestError,
    );
    assert.equal(upstream.requests.length, 0);
    await client.chat.completions.create({ model: 'open-model', messages: [{ role: 'user', content: FLAGGED }] });
    assert.equal(upstream.requests.length, 1);
  });
});
