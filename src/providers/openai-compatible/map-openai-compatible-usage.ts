/**
 * Normalises the `usage` object of the OpenAI Chat Completions API
 * (https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage) into the canonical
 * Usage (docs/design.md convention 5). OpenAI counts cached tokens INSIDE `prompt_tokens`
 * (`prompt_tokens_details.cached_tokens` is the part read from its prompt cache; OpenAI bills no cache
 * writes), so the canonical prompt is `prompt_tokens` as it is. A server that reports no cache figures
 * (vLLM, Ollama, llama.cpp server) has every prompt token uncached.
 *
 * OpenAI counts reasoning inside `completion_tokens`; some compatible servers (xAI) report it beside
 * it, which shows as `total_tokens = prompt + completion + reasoning`: then reasoning is added to the
 * output so that `outputTokens` always includes it.
 */
import type { Usage } from '../../core/usage.ts';
import type { OpenAIUsageView } from './openai-compatible-wire.ts';

export function mapOpenAICompatibleUsage(usage: OpenAIUsageView): Usage {
  const inputTokens = usage.promptTokens ?? 0;
  const reasoningTokens = usage.reasoningTokens ?? 0;
  let outputTokens = usage.completionTokens ?? 0;
  if (reasoningTokens > 0 && usage.totalTokens === inputTokens + outputTokens + reasoningTokens) outputTokens += reasoningTokens;
  return {
    inputTokens,
    cachedInputTokens: Math.min(usage.cachedTokens ?? 0, inputTokens),
    cacheWriteInputTokens: 0,
    cacheWrite1hInputTokens: 0,
    outputTokens,
    reasoningTokens: Math.min(reasoningTokens, outputTokens),
    requests: 1,
    estimated: false,
    raw: usage.raw,
  };
}
