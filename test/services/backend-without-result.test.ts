// A backend whose stream ends with neither `finish` nor `error` (it broke the LanguageModel contract):
// one fault, one code. Before the first content part the request fails 500 `service_unavailable`;
// after it, the stream's last part is an error with the same code and message (issue 41, house item 8).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import type { LanguageModel } from '../../src/core/language-model.ts';
import { ServiceError } from '../../src/core/service-error.ts';
import type { StreamPart } from '../../src/core/stream-parts.ts';
import { GenerationService } from '../../src/services/generation/generation-service.ts';
import { streamOf } from '../support/generation-stream.ts';

/** A backend (a LanguageModel, as a provider or a local engine is) that yields `parts` and then just stops. */
function stoppingBackend(parts: StreamPart[]): LanguageModel {
  return {
    async *stream() {
      for (const part of parts) yield part;
    },
  };
}

function serviceOver(model: LanguageModel): GenerationService {
  const config = loadConfig({
    overrides: {
      providers: { engine: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9', maxRetries: 0, timeoutMs: 5000 } },
      models: [{ id: 'stops', provider: 'engine', capabilities: ['chat', 'streaming'] }],
    },
  });
  return new GenerationService({ config, registry: { languageModel: () => model }, sleep: async () => {} });
}

const request = { model: 'stops', messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Hi' }] }] };

describe('a backend that ends its answer without a result', () => {
  test('before any output: the request fails 500 service_unavailable', async () => {
    const service = serviceOver(stoppingBackend([]));
    await assert.rejects(streamOf(service, request, { signal: new AbortController().signal }), (error: unknown) => {
      assert.ok(error instanceof ServiceError);
      assert.equal(error.status, 500);
      assert.equal(error.code, 'service_unavailable');
      assert.equal(error.message, 'The model backend ended its answer without a result.');
      return true;
    });
  });

  test('after output: the final part is an error with the same code and message', async () => {
    const service = serviceOver(
      stoppingBackend([
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hel' },
      ]),
    );
    const parts: StreamPart[] = [];
    for await (const part of await streamOf(service, request, { signal: new AbortController().signal })) parts.push(part);
    const last = parts.at(-1);
    assert.equal(last?.type, 'error');
    assert.equal(last.type === 'error' ? last.error.code : undefined, 'service_unavailable');
    assert.equal(last.type === 'error' ? last.error.message : undefined, 'The model backend ended its answer without a result.');
  });
});
