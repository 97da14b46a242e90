/**
 * The generation pipeline in one process, for the in-process benchmarks (generation-pipeline.ts,
 * pipeline-promises.ts): a canned OpenAI-compatible upstream answer (the same 20-delta answer
 * mock-openai-upstream.ts sends, in one read) goes through decode, resolve, prompt count, admission, the
 * provider's SSE parse and mapping, the generation service, the output cap, the meter and the format's
 * encoder, then the SSE serialiser (read in batches, as the SSE writer reads). No HTTP server, no
 * sockets. Beside it, the least any translating gateway must do with that answer (`throughBaseline`).
 */
import { cannedChatAnswer } from './canned-chat-answer.ts';
import { mockUpstreamConfig } from './mock-upstream-config.ts';
import type { GenerationCase } from './generation-cases.ts';
import type { AuthContext } from '../../src/accounts/authenticator.ts';
import { loadConfig, type ModelConfig } from '../../src/config/index.ts';
import { batchesOf } from '../../src/core/batched.ts';
import { CancellationSource } from '../../src/core/cancellation.ts';
import { SPEC_DECODE_OPTIONS } from '../../src/core/generation-format.ts';
import { serializeSseEvent } from '../../src/http/sse-writer.ts';
import { MemoryLimitStore } from '../../src/limits/memory/memory-limit-store.ts';
import { OpenAICompatibleChatLanguageModel } from '../../src/providers/openai-compatible/openai-compatible-chat-language-model.ts';
import { ProviderRegistry } from '../../src/providers/registry.ts';
import type { UpstreamHttpClient, UpstreamResponse } from '../../src/providers/shared/http-client.ts';
import { UpstreamBody } from '../../src/providers/shared/upstream-body.ts';
import { chatCompletionsEndpoint, messagesEndpoint, responsesEndpoint } from '../../src/routes/generation-endpoints.ts';
import { GenerationService } from '../../src/services/generation/generation-service.ts';
import { MeteredGenerations } from '../../src/services/generation/metered-generations.ts';
import { runGenerationEndpoint, type GenerationEndpoint } from '../../src/services/generation/run-generation-endpoint.ts';
import { MeteringService } from '../../src/services/metering/metering-service.ts';
import { UsageLedger } from '../../src/services/metering/usage-ledger.ts';
import { InputModeration } from '../../src/services/generation/input-moderation.ts';
import type { StoredResponseStore } from '../../src/routes/generation-endpoints.ts';

// The upstream answer, as bench/support/mock-openai-upstream.ts sends it.
const { completion: completionText, stream: streamText } = cannedChatAnswer(20, Math.floor(Date.now() / 1000));
const streamBytes = Buffer.from(streamText);

/** An upstream client that answers every POST at once with the canned answer (no socket). */
const cannedClient = {
  async postJson(_path: string, payload: { stream?: boolean }): Promise<UpstreamResponse> {
    const stream = payload.stream === true;
    const body = UpstreamBody.of(stream ? streamBytes : completionText);
    return { status: 200, headers: { 'content-type': stream ? 'text/event-stream' : 'application/json' }, body };
  },
  sanitize: (message: string) => message,
  transportError: (error: unknown) => error,
  readErrorText: () => Promise.resolve(''),
} as unknown as UpstreamHttpClient;

const config = loadConfig({
  env: {},
  // The canned client below answers instead of this address (nothing listens there).
  overrides: mockUpstreamConfig('http://127.0.0.1:9'),
});
const providers = ProviderRegistry.fromConfig(config);
const model = new OpenAICompatibleChatLanguageModel(cannedClient, { headers: {}, upstreamModel: 'bench-model' } as never);
const registry = { languageModel: (_model: ModelConfig) => model };
const generation = new GenerationService({ config, registry });
const ledger = new UsageLedger({ sink: { insertMany: () => Promise.resolve() } as never });
const metering = new MeteringService(config, new MemoryLimitStore(), ledger);
const generations = new MeteredGenerations({
  generation,
  metering,
  inputModeration: new InputModeration(config, providers),
  decodeOptions: SPEC_DECODE_OPTIONS,
});
const auth: AuthContext = { keyId: 'key_bench', organizationId: 'org_bench', tier: 'Enterprise', permissions: new Set(), expiresAt: null };
const noStore = {
  findItems: () => Promise.resolve([]),
  loadHistory: () => Promise.resolve([]),
  save: () => Promise.resolve(),
} as never as StoredResponseStore;

export const ENDPOINTS: Record<GenerationCase['path'], GenerationEndpoint> = {
  '/v1/chat/completions': chatCompletionsEndpoint,
  '/v1/messages': messagesEndpoint,
  '/v1/responses': responsesEndpoint(noStore) as GenerationEndpoint,
};

/** One request through the pipeline; returns the characters the client would receive. */
export async function throughPipeline(endpoint: GenerationEndpoint, bodyText: string): Promise<number> {
  const caller = { auth, requestId: 'req_bench', batch: false, startedAt: process.hrtime.bigint(), signal: new CancellationSource() };
  const answer = await runGenerationEndpoint(endpoint, caller, JSON.parse(bodyText), generations);
  if (!answer.stream) return JSON.stringify(answer.body).length;
  let characters = 0;
  for await (const batch of batchesOf(answer.events)) for (const event of batch) characters += serializeSseEvent(event).length;
  return characters;
}

/** The baseline: parse each upstream chunk, write one event per chunk (what any translation must do at least). */
export async function throughBaseline(stream: boolean): Promise<number> {
  await Promise.resolve();
  if (!stream) return JSON.stringify(JSON.parse(completionText)).length;
  let characters = 0;
  for (const event of streamText.split('\n\n')) {
    if (!event.startsWith('data: {')) continue;
    characters += `data: ${JSON.stringify(JSON.parse(event.slice(6)))}\n\n`.length;
  }
  return characters;
}

/** Writes what the ledger holds and stops its timer. */
export function closePipeline(): Promise<void> {
  return ledger.close();
}
