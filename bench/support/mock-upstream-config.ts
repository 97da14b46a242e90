/**
 * The Switchyard configuration the gateway benchmarks run with: the Enterprise tier (nothing to run
 * into; limits are still counted) and one model, `bench-model`, served by the mock OpenAI-compatible
 * upstream (bench/support/mock-openai-upstream.ts) at `upstreamOrigin`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `model` adds to (or replaces) the model's fields, e.g. `{ maxOutputTokens: 8192 }`. */
export function mockUpstreamConfig(upstreamOrigin: string, model: Record<string, unknown> = {}) {
  return {
    defaultTier: 'Enterprise',
    providers: { mock: { kind: 'openai-compatible' as const, baseUrl: `${upstreamOrigin}/v1`, maxRetries: 0 } },
    models: [
      {
        id: 'bench-model',
        provider: 'mock',
        capabilities: ['chat' as const, 'streaming' as const],
        pricing: { inputPerMillion: 1, outputPerMillion: 2 },
        ...model,
      },
    ],
  };
}

/** Writes `mockUpstreamConfig(...)` to a fresh temporary file for SWITCHYARD_CONFIG; returns its path. */
export function writeMockUpstreamConfig(upstreamOrigin: string, model: Record<string, unknown> = {}): string {
  const file = join(mkdtempSync(join(tmpdir(), 'switchyard-bench-config-')), 'config.json');
  writeFileSync(file, JSON.stringify(mockUpstreamConfig(upstreamOrigin, model)));
  return file;
}
