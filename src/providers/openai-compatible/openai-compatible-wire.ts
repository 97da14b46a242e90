/**
 * Wire shapes of the OpenAI Chat Completions API (https://platform.openai.com/docs/api-reference/chat)
 * as OpenAI, vLLM, Ollama, llama.cpp server and LM Studio speak it. Requests are typed strictly (we
 * build them); replies are read leniently into the small views below, keeping only what the mapping
 * uses, so that the quirks of each server (missing `index`, `reasoning` instead of `reasoning_content`,
 * usage in the finish chunk) do not break parsing.
 */
import { asArray, asNumber, asObject, asString, type JsonObject } from '../shared/lenient-json.ts';

// ---- request (what we send) ----

export type OpenAIContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'file'; file: { filename: string; file_data: string } };

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type OpenAIMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | OpenAIContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAIToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface OpenAITool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
}

export type OpenAIToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export type OpenAIResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean; description?: string } };

export interface OpenAIChatRequest {
  model: string;
  messages: OpenAIMessage[];
  /** False when the whole answer is asked for in one JSON body. */
  stream: boolean;
  /** Only on a streamed request. */
  stream_options?: { include_usage: true };
  tools?: OpenAITool[];
  tool_choice?: OpenAIToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: OpenAIResponseFormat;
  stop?: string[];
  /** Completion token cap, tokens (older servers and most compatible ones). */
  max_tokens?: number;
  /** Completion token cap, tokens (OpenAI's own API; required by its reasoning models). */
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  /** Not OpenAI: vLLM, llama.cpp server and LM Studio take it as an extension. */
  top_k?: number;
  seed?: number;
  user?: string;
  reasoning_effort?: 'low' | 'medium' | 'high';
}

// ---- replies (what we read) ----

/** Usage as OpenAI-compatible servers report it; all token counts. */
export interface OpenAIUsageView {
  promptTokens: number | undefined;
  completionTokens: number | undefined;
  totalTokens: number | undefined;
  /** Prompt tokens read from the prompt cache (part of `promptTokens`). */
  cachedTokens: number | undefined;
  reasoningTokens: number | undefined;
  raw: JsonObject;
}

export interface OpenAIToolCallDeltaView {
  /** Position of the call in the turn; servers that omit it get the call's position in the array. */
  index: number;
  id: string | undefined;
  name: string | undefined;
  arguments: string | undefined;
}

export interface OpenAIChoiceDeltaView {
  index: number;
  content: string | undefined;
  /** `reasoning_content` (vLLM, DeepSeek, xAI) or `reasoning` (Ollama, OpenRouter). */
  reasoning: string | undefined;
  refusal: string | undefined;
  toolCalls: readonly OpenAIToolCallDeltaView[];
  finishReason: string | undefined;
}

export interface OpenAIErrorView {
  message: string | undefined;
  type: string | undefined;
  code: string | number | undefined;
  param: string | undefined;
}

export interface OpenAIChunkView {
  id: string | undefined;
  model: string | undefined;
  choices: OpenAIChoiceDeltaView[];
  usage: OpenAIUsageView | undefined;
  /** Some servers send `{"error": {...}}` as a stream event when generation fails mid-way. */
  error: OpenAIErrorView | undefined;
}

export interface OpenAICompletionView {
  id: string | undefined;
  model: string | undefined;
  content: string | undefined;
  reasoning: string | undefined;
  refusal: string | undefined;
  toolCalls: Array<{ id: string | undefined; name: string; arguments: string }>;
  finishReason: string | undefined;
  usage: OpenAIUsageView | undefined;
}

export function readUsage(value: unknown): OpenAIUsageView | undefined {
  const usage = asObject(value);
  if (usage === undefined) return undefined;
  return {
    promptTokens: asNumber(usage['prompt_tokens']),
    completionTokens: asNumber(usage['completion_tokens']),
    totalTokens: asNumber(usage['total_tokens']),
    // OpenAI's field, else DeepSeek's (https://api-docs.deepseek.com/guides/kv_cache), both part of prompt_tokens.
    cachedTokens: asNumber(asObject(usage['prompt_tokens_details'])?.['cached_tokens']) ?? asNumber(usage['prompt_cache_hit_tokens']),
    reasoningTokens: asNumber(asObject(usage['completion_tokens_details'])?.['reasoning_tokens']),
    raw: usage,
  };
}

export function readError(value: unknown): OpenAIErrorView | undefined {
  if (typeof value === 'string') return { message: value, type: undefined, code: undefined, param: undefined };
  const error = asObject(value);
  if (error === undefined) return undefined;
  const code = error['code'];
  return {
    message: asString(error['message']),
    type: asString(error['type']),
    code: typeof code === 'string' || typeof code === 'number' ? code : undefined,
    param: asString(error['param']),
  };
}

function readReasoning(delta: JsonObject): string | undefined {
  return asString(delta['reasoning_content']) ?? asString(delta['reasoning']);
}

function readToolCallDelta(value: unknown, position: number): OpenAIToolCallDeltaView | undefined {
  const call = asObject(value);
  if (call === undefined) return undefined;
  const fn = asObject(call['function']);
  const argumentsValue = fn?.['arguments'];
  return {
    index: asNumber(call['index']) ?? position,
    id: asString(call['id']),
    name: asString(fn?.['name']),
    // A few servers send arguments as an object rather than JSON text.
    arguments: typeof argumentsValue === 'string' ? argumentsValue : asObject(argumentsValue) ? JSON.stringify(argumentsValue) : undefined,
  };
}

/** The tool calls of a delta that has none (most chunks): one shared empty list. */
const NO_TOOL_CALLS: readonly OpenAIToolCallDeltaView[] = Object.freeze([]);
const NO_DELTA: JsonObject = Object.freeze({});

/**
 * Reads one `chat.completion.chunk` event. It runs once per streamed chunk, so it walks arrays by
 * index (an `entries()` loop makes an iterator and a pair per element) and shares the empty lists.
 */
export function readChunk(value: unknown): OpenAIChunkView | undefined {
  const chunk = asObject(value);
  if (chunk === undefined) return undefined;
  const choices: OpenAIChoiceDeltaView[] = [];
  const items = asArray(chunk['choices']);
  for (let position = 0; items !== undefined && position < items.length; position++) {
    const choice = asObject(items[position]);
    if (choice === undefined) continue;
    const delta = asObject(choice['delta']) ?? NO_DELTA;
    const calls = asArray(delta['tool_calls']);
    let toolCalls = NO_TOOL_CALLS;
    if (calls !== undefined && calls.length > 0) {
      const views: OpenAIToolCallDeltaView[] = [];
      for (let callPosition = 0; callPosition < calls.length; callPosition++) {
        const view = readToolCallDelta(calls[callPosition], callPosition);
        if (view !== undefined) views.push(view);
      }
      toolCalls = views;
    }
    choices.push({
      index: asNumber(choice['index']) ?? position,
      content: asString(delta['content']),
      reasoning: readReasoning(delta),
      refusal: asString(delta['refusal']),
      toolCalls,
      finishReason: asString(choice['finish_reason']),
    });
  }
  return {
    id: asString(chunk['id']),
    model: asString(chunk['model']),
    choices,
    usage: readUsage(chunk['usage']),
    error: chunk['error'] === undefined || chunk['error'] === null ? undefined : readError(chunk['error']),
  };
}

/**
 * Reads a whole `chat.completion` body (an upstream that answered a streaming request without streaming);
 * undefined when it has no `choices[0].message`.
 */
export function readCompletion(value: unknown): OpenAICompletionView | undefined {
  const completion = asObject(value);
  if (completion === undefined) return undefined;
  const choice = asObject(asArray(completion['choices'])?.[0]);
  const message = asObject(choice?.['message']);
  // A body without a choice holding a message is no answer (a fault, not an empty success).
  if (message === undefined) return undefined;
  const toolCalls: OpenAICompletionView['toolCalls'] = [];
  for (const [position, call] of (asArray(message['tool_calls']) ?? []).entries()) {
    const view = readToolCallDelta(call, position);
    if (view?.name !== undefined) toolCalls.push({ id: view.id, name: view.name, arguments: view.arguments ?? '' });
  }
  return {
    id: asString(completion['id']),
    model: asString(completion['model']),
    content: asString(message['content']),
    reasoning: readReasoning(message),
    refusal: asString(message['refusal']),
    toolCalls,
    finishReason: asString(choice?.['finish_reason']),
    usage: readUsage(completion['usage']),
  };
}
