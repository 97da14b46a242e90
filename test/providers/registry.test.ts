import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig, type ModelConfig } from '../../src/config/index.ts';
import { assembleResult } from '../../src/core/assemble-result.ts';
import { ProviderRegistry } from '../../src/providers/registry.ts';
import { MockAnthropicServer, MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { userRequest } from './helpers.ts';

describe('ProviderRegistry', () => {
  const openai = new MockOpenAIServer();
  const anthropic = new MockAnthropicServer();
  before(async () => {
    await Promise.all([openai.start(), anthropic.start()]);
  });
  after(async () => {
    await Promise.all([openai.close(), anthropic.close()]);
  });

  function configFor() {
    return loadConfig({
      env: { ANTHROPIC_TEST_KEY: 'sk-ant-from-env' },
      overrides: {
        providers: {
          local: { kind: 'openai-compatible', baseUrl: openai.baseUrl },
          claude: { kind: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: { env: 'ANTHROPIC_TEST_KEY' } },
        },
        models: [
          { id: 'local-chat', provider: 'local', upstreamModel: 'llama-3', capabilities: ['chat'] },
          { id: 'claude-chat', provider: 'claude', upstreamModel: 'claude-x', capabilities: ['chat'], maxOutputTokens: 321 },
        ],
      },
    });
  }

  function model(models: readonly ModelConfig[], id: string): ModelConfig {
    const found = models.find((candidate) => candidate.id === id);
    assert.ok(found, id);
    return found;
  }

  test('instantiates every configured kind and serves their chat models', async () => {
    const config = configFor();
    const registry = ProviderRegistry.fromConfig(config);
    try {
      assert.deepEqual(registry.providerIds().sort(), ['builtin', 'claude', 'local']);
      const signal = new AbortController().signal;
      const local = await assembleResult(registry.languageModel(model(config.models, 'local-chat')).stream(userRequest('hi'), { signal }));
      assert.deepEqual(local.content, [{ type: 'text', text: 'Mock: hi' }]);
      assert.equal((openai.requests.at(-1)?.body as { model?: string }).model, 'llama-3');

      const claude = await assembleResult(
        registry.languageModel(model(config.models, 'claude-chat')).stream(userRequest('hello'), { signal }),
      );
      assert.deepEqual(claude.content, [{ type: 'text', text: 'Mock: hello' }]);
      const sent = anthropic.requests.at(-1);
      assert.equal(sent?.headers['x-api-key'], 'sk-ant-from-env');
      assert.equal((sent?.body as { max_tokens?: number }).max_tokens, 321, 'the model config gives the default max_tokens');

      const echo = await assembleResult(
        registry.languageModel(model(config.models, 'switchyard-echo')).stream(userRequest('yo'), { signal }),
      );
      assert.deepEqual(echo.content, [{ type: 'text', text: 'Echo: yo' }]);
    } finally {
      await registry.close();
      await registry.close();
    }
  });

  test('a model kind its provider cannot serve is a 400 naming the model', async () => {
    const config = configFor();
    const registry = ProviderRegistry.fromConfig(config);
    try {
      assert.throws(() => registry.embeddingModel(model(config.models, 'claude-chat')), { status: 400, param: 'model' });
      assert.throws(() => registry.imageModel(model(config.models, 'claude-chat')), { status: 400, param: 'model' });
    } finally {
      await registry.close();
    }
  });

  test('a llama-cpp provider is created without touching the native side until a request comes', async () => {
    const config = loadConfig({
      env: {},
      overrides: {
        providers: { gguf: { kind: 'llama-cpp', threads: 1 } },
        models: [{ id: 'local-gguf', provider: 'gguf', upstreamModel: '/models/none.gguf', capabilities: ['chat'] }],
      },
    });
    const registry = ProviderRegistry.fromConfig(config);
    try {
      assert.equal(typeof registry.languageModel(model(config.models, 'local-gguf')).stream, 'function');
    } finally {
      await registry.close();
    }
  });
});
