/**
 * Encodes a canonical GenerationResult as an OpenAI `chat.completion` object.
 *
 * Wire document: docs/wire-contracts.md "Chat completions" (the `chat.completion` response, tool call and usage
 * shapes) and the OpenAI OpenAPI `CreateChatCompletionResponse`. Reasoning text, which the OpenAI shape
 * has no field for, goes to `message.reasoning_content` (the spelling OpenAI-compatible servers such as
 * vLLM, DeepSeek and xAI use; the SDK keeps unknown fields and ignores them otherwise).
 */
import type { FinishReason } from '../../core/generation.ts';
import type { GenerationResult } from '../../core/assemble-result.ts';
import { newId } from '../../core/ids.ts';
import type { Usage } from '../../core/usage.ts';

/** What both chat encoders stamp on every object or chunk of one completion. */
export interface ChatCompletionContext {
  /** `chatcmpl-...` id, the same on every chunk of a stream. */
  id: string;
  /** Creation time, Unix seconds. */
  created: number;
  /** Model name echoed to the client (normally the `model` the client sent). */
  model: string;
}

/** A fresh context: new `chatcmpl-` id, created = now in Unix seconds. */
export function createChatCompletionContext(model: string): ChatCompletionContext {
  return { id: newId.chatCompletion(), created: Math.floor(Date.now() / 1000), model };
}

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ChatCompletionToolCall {
  /** `call_...` id, verbatim from the canonical tool call. */
  id: string;
  type: 'function';
  function: { name: string; /** Arguments as a JSON text. */ arguments: string };
}

export interface ChatCompletionMessage {
  role: 'assistant';
  /** Concatenated text, or null when the model produced none (for example only tool calls). */
  content: string | null;
  /** Always null: refusals are not a separate channel in the canonical stream. */
  refusal: null;
  tool_calls?: ChatCompletionToolCall[];
  /** Non-standard: the model's reasoning text, present only when there was some. */
  reasoning_content?: string;
}

/** All figures are token counts. */
export interface ChatCompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  /** Unix seconds. */
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: ChatCompletionMessage;
    logprobs: null;
    finish_reason: ChatFinishReason;
  }>;
  usage: ChatCompletionUsage;
}

/**
 * Canonical finish reason -> chat `finish_reason` (docs/wire-contracts.md "Chat completions"). `error` has
 * no chat spelling; a stream that failed is reported as an error, so it only reaches here as a normal
 * end of output and is said `stop`.
 */
export function mapFinishReason(reason: FinishReason): ChatFinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool-calls':
      return 'tool_calls';
    case 'content-filter':
      return 'content_filter';
    case 'stop':
    case 'stop-sequence':
    case 'error':
      return 'stop';
  }
}

/** Canonical usage -> chat `usage` (docs/wire-contracts.md "usage"). */
export function encodeUsage(usage: Usage): ChatCompletionUsage {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

/** GenerationResult -> `chat.completion` object (one choice, index 0). */
export function encodeChatCompletion(result: GenerationResult, context: ChatCompletionContext): ChatCompletion {
  let text: string | null = null;
  let reasoning = '';
  const toolCalls: ChatCompletionToolCall[] = [];
  for (const part of result.content) {
    switch (part.type) {
      case 'text':
        text = (text ?? '') + part.text;
        break;
      case 'reasoning':
        reasoning += part.text;
        break;
      case 'tool-call':
        toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.input } });
        break;
    }
  }
  // A message that is only tool calls has `content: null`, as OpenAI sends it.
  const message: ChatCompletionMessage = { role: 'assistant', content: text, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning_content = reasoning;
  return {
    id: context.id,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: mapFinishReason(result.finishReason) }],
    usage: encodeUsage(result.usage),
  };
}
