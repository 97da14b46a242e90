// MeteredGenerations (services/generation/metered-generations.ts) against the in-process limit store
// and a real HTTP upstream mock: a request that names no maximum and no longer fits a token budget is
// capped to what is left. The cap is returned by the admission step and sent upstream on a copy of the
// request; the caller's request is never rewritten (issue 41, house item 5).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AuthContext } from '../../src/services/caller-identity.ts';
import { loadConfig } from '../../src/config/index.ts';
import { CancellationSource } from '../../src/core/cancellation.ts';
import { SPEC_DECODE_OPTIONS } from '../../src/core/generation-format.ts';
import type { GenerationRequest } from '../../src/core/generation.ts';
import { MemoryLimitStore } from '../../src/limits/memory/memory-limit-store.ts';
import { ProviderRegistry } from '../../src/providers/registry.ts';
import type { Caller } from '../../src/services/caller.ts';
import { GenerationService } from '../../src/services/generation/generation-service.ts';
import { MeteredGenerations } from '../../src/services/generation/metered-generations.ts';
import { MeteringService } from '../../src/services/metering/metering-service.ts';
import { UsageLedger, type LedgerRecord } from '../../src/services/metering/usage-ledger.ts';
import { InputModeration } from '../../src/services/generation/input-moderation.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';

const TIGHT = {
  requestsPerMinute: 0,
  tokensPerMinute: 50,
  tokensPerDay: 0,
  tokensPerMonth: 0,
  concurrentBatches: 1,
  permissions: ['chat.completions'],
};

describe('MeteredGenerations: a budget that fits only part of the default output', () => {
  const upstream = new MockOpenAIServer();
  let registry: ProviderRegistry;
  let generations: MeteredGenerations;
  const written: LedgerRecord[] = [];

  before(async () => {
    await upstream.start();
    const config = loadConfig({
      env: {},
      overrides: {
        tiers: { Tight: TIGHT } as never,
        providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [{ id: 'm', provider: 'up', capabilities: ['chat'], maxOutputTokens: 4096 }],
      },
    });
    registry = ProviderRegistry.fromConfig(config);
    const ledger = new UsageLedger({ sink: { insertMany: async (records) => void written.push(...records) }, flushIntervalMs: 3_600_000 });
    const metering = new MeteringService(config, new MemoryLimitStore(), ledger);
    const generation = new GenerationService({ config, registry });
    const inputModeration = new InputModeration(config, registry);
    generations = new MeteredGenerations({ generation, metering, inputModeration, decodeOptions: SPEC_DECODE_OPTIONS });
  });
  after(async () => {
    await registry.close();
    await upstream.close();
  });

  test("the backend is asked for what is left, and the caller's request keeps no maximum", async () => {
    const auth: AuthContext = { keyId: 'key_tight', organizationId: 'org-tight', tier: 'Tight', permissions: new Set(), expiresAt: null };
    const caller: Caller = {
      auth,
      requestId: 'req_tight',
      batch: false,
      startedAt: process.hrtime.bigint(),
      signal: new CancellationSource(),
    };
    const request: GenerationRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
    upstream.enqueue({ type: 'reply', reply: { text: 'ok' } });
    const started = await generations.start(caller, request, { endpoint: '/v1/chat/completions', preferWholeResponse: true });
    for await (const part of started.parts) void part;
    const body = upstream.requests[0]!.body as { max_tokens?: number; max_completion_tokens?: number };
    const sent = body.max_tokens ?? body.max_completion_tokens;
    assert.equal(sent, 50 - started.promptTokens);
    assert.equal(request.maxOutputTokens, undefined, 'the admission does not rewrite the request');
    assert.equal(started.admission.isSettled, true);
  });
});
