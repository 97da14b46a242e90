/**
 * Normalises the `usage` object of the OpenAI Chat Completions API
 * (https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage) into the canonical
 * Usage (docs/design.md convention 5). OpenAI counts reasoning inside `completion_tokens`; some compatible
 * servers (xAI) report it beside it, which shows as `total_tokens = prompt + completion + reasoning`:
 * then reasoning is added to the output so that `outputTokens` always includes it.
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
    outputTokens,
    reasoningTokens: Math.min(reasoningTokens, outputTokens),
    estimated: false,
    raw: usage.raw,
  };
}
