/**
 * Encodes a canonical GenerationResult as an OpenAI `chat.completion` object.
 *
 * Wire document: docs/wire-contracts.md "Chat completions" (the `chat.completion` response, tool call and usage
 * shapes) and the OpenAI OpenAPI `CreateChatCompletionResponse`. Reasoning text, which the OpenAI shape
 * has no field for, goes to `message.reasoning_content` (the spelling OpenAI-compatible servers such as
 * vLLM, DeepSeek and xAI use; the SDK keeps unknown fields and ignores them otherwise).
 */
import type { GenerationResult } from '../../core/assemble-result.ts';
import { newId } from '../../core/ids.ts';
import { mapFinishReason } from './map-finish-reason.ts';
import { encodeUsage } from './map-usage.ts';
import type { ChatCompletion, ChatCompletionMessage, ChatCompletionToolCall } from './wire-types.ts';

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
