/**
 * Types of the chat completions wire format as this service sends it: the `chat.completion` object
 * (OpenAI OpenAPI `CreateChatCompletionResponse`; docs/wire-contracts.md "Chat completions"). Stream chunks
 * are written as finished JSON text (encode-stream.ts), in the `CreateChatCompletionStreamResponse` shape.
 */

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
