/**
 * Attribute names of the OpenTelemetry GenAI semantic conventions (semantic-conventions 1.45,
 * "Development" status). They live in the package's `incubating` entry, which its README asks
 * users to copy rather than import (incubating names may change in a minor release); copied here.
 * Switchyard's own attributes carry the `switchyard.` prefix.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  /** The older name of `gen_ai.provider.name`, still read by many backends (Langfuse, Datadog). */
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  requestTopK: 'gen_ai.request.top_k',
  requestStopSequences: 'gen_ai.request.stop_sequences',
  requestSeed: 'gen_ai.request.seed',
  requestStream: 'gen_ai.request.stream',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
} as const;

export const SWITCHYARD = {
  requestId: 'switchyard.request_id',
  organizationId: 'switchyard.organization_id',
  keyId: 'switchyard.key_id',
  tier: 'switchyard.tier',
  model: 'switchyard.model',
  deployment: 'switchyard.deployment',
  attempt: 'switchyard.attempt',
  retry: 'switchyard.retry',
  usageEstimated: 'switchyard.usage.estimated',
  batchId: 'switchyard.batch.id',
  batchLine: 'switchyard.batch.line',
  batchStatus: 'switchyard.batch.status',
  batchTotal: 'switchyard.batch.request_counts.total',
  batchCompleted: 'switchyard.batch.request_counts.completed',
  batchFailed: 'switchyard.batch.request_counts.failed',
  errorCode: 'switchyard.error.code',
} as const;

/** `gen_ai.provider.name` of each provider kind (well-known values where the convention has one). */
export function genAiProviderName(providerKind: string): string {
  switch (providerKind) {
    case 'anthropic':
      return 'anthropic';
    case 'openai-compatible':
      return 'openai';
    case 'llama-cpp':
      return 'llama.cpp';
    default:
      return providerKind;
  }
}

/** `gen_ai.response.finish_reasons` values: the conventions use the OpenAI-style names. */
export function genAiFinishReason(reason: string): string {
  switch (reason) {
    case 'stop-sequence':
      return 'stop';
    case 'tool-calls':
      return 'tool_calls';
    case 'content-filter':
      return 'content_filter';
    default:
      return reason;
  }
}
