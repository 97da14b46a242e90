// Canonical part scripts shared by the response-style encoder tests: what a provider yields.
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import type { Usage } from '../../../src/core/usage.ts';

export const usage: Usage = {
  inputTokens: 12,
  cachedInputTokens: 2,
  cacheWriteInputTokens: 0,
  cacheWrite1hInputTokens: 0,
  outputTokens: 9,
  reasoningTokens: 3,
  requests: 1,
  estimated: false,
};

export const textParts: StreamPart[] = [
  { type: 'response-metadata', upstreamId: 'up-1', upstreamModel: 'upstream-model' },
  { type: 'text-start', id: 't0' },
  { type: 'text-delta', id: 't0', delta: 'Hello' },
  { type: 'text-delta', id: 't0', delta: ', ' },
  { type: 'text-delta', id: 't0', delta: 'world!' },
  { type: 'text-end', id: 't0' },
  { type: 'finish', finishReason: 'stop', usage },
];

export const reasoningParts: StreamPart[] = [
  { type: 'reasoning-start', id: 'r0' },
  { type: 'reasoning-delta', id: 'r0', delta: 'Let me think.' },
  { type: 'reasoning-signature', id: 'r0', signature: 'sig-abc' },
  { type: 'reasoning-end', id: 'r0' },
  { type: 'reasoning-redacted', id: 'r1', data: 'opaque-data' },
  { type: 'text-start', id: 't0' },
  { type: 'text-delta', id: 't0', delta: 'Answer.' },
  { type: 'text-end', id: 't0' },
  { type: 'finish', finishReason: 'stop', usage },
];

/** Two tool calls whose fragments interleave (an OpenAI-compatible upstream streaming by index). */
export const parallelToolParts: StreamPart[] = [
  { type: 'tool-input-start', id: 'call_a', toolName: 'get_weather' },
  { type: 'tool-input-delta', id: 'call_a', delta: '{"city":' },
  { type: 'tool-input-start', id: 'call_b', toolName: 'get_time' },
  { type: 'tool-input-delta', id: 'call_b', delta: '{"zone":' },
  { type: 'tool-input-delta', id: 'call_a', delta: '"Paris"}' },
  { type: 'tool-input-delta', id: 'call_b', delta: '"CET"}' },
  { type: 'tool-input-end', id: 'call_b' },
  { type: 'tool-input-end', id: 'call_a' },
  { type: 'finish', finishReason: 'tool-calls', usage },
];

/** Text cut by max_output_tokens. */
export const lengthParts: StreamPart[] = [
  { type: 'text-start', id: 't0' },
  { type: 'text-delta', id: 't0', delta: 'This answer is cu' },
  { type: 'text-end', id: 't0' },
  { type: 'finish', finishReason: 'length', usage },
];
