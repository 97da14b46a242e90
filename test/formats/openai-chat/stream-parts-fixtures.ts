/**
 * Canonical part sequences shared by the openai-chat encoder tests, shaped like what providers emit
 * (text in several deltas, interleaved parallel tool calls with fragmented arguments, reasoning first).
 */
import type { StreamPart } from '../../../src/core/stream-parts.ts';
import type { Usage } from '../../../src/core/usage.ts';

export const usage: Usage = {
  inputTokens: 16,
  cachedInputTokens: 4,
  cacheWriteInputTokens: 0,
  cacheWrite1hInputTokens: 0,
  outputTokens: 9,
  reasoningTokens: 3,
  requests: 1,
  estimated: false,
};

export const textParts: StreamPart[] = [
  { type: 'response-metadata', upstreamId: 'upstream-1', upstreamModel: 'upstream-model' },
  { type: 'text-start', id: '0' },
  { type: 'text-delta', id: '0', delta: 'Hello' },
  { type: 'text-delta', id: '0', delta: '' },
  { type: 'text-delta', id: '0', delta: ', "world"\n' },
  { type: 'text-end', id: '0' },
  { type: 'finish', finishReason: 'stop', usage },
];

export const reasoningParts: StreamPart[] = [
  { type: 'reasoning-start', id: 'r' },
  { type: 'reasoning-delta', id: 'r', delta: 'Think' },
  { type: 'reasoning-delta', id: 'r', delta: 'ing.' },
  { type: 'reasoning-signature', id: 'r', signature: 'sig' },
  { type: 'reasoning-end', id: 'r' },
  { type: 'reasoning-redacted', id: 'x', data: 'opaque' },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'Answer.' },
  { type: 'text-end', id: 't' },
  { type: 'finish', finishReason: 'stop-sequence', stopSequence: 'END', usage },
];

/** Two parallel tool calls whose argument fragments interleave; the second has no arguments at all. */
export const parallelToolParts: StreamPart[] = [
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'Checking.' },
  { type: 'text-end', id: 't' },
  { type: 'tool-input-start', id: 'call_weather', toolName: 'get_weather' },
  { type: 'tool-input-delta', id: 'call_weather', delta: '{"city":' },
  { type: 'tool-input-start', id: 'call_time', toolName: 'get_time' },
  { type: 'tool-input-delta', id: 'call_weather', delta: '"Paris"}' },
  { type: 'tool-input-end', id: 'call_time' },
  { type: 'tool-input-end', id: 'call_weather' },
  { type: 'finish', finishReason: 'tool-calls', usage },
];
