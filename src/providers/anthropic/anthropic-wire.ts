/**
 * Wire shapes of the Anthropic Messages API (https://docs.anthropic.com/en/api/messages and
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming). Requests are typed strictly (we
 * build them); replies are read leniently into the small views below, keeping only what the mapping
 * uses. Unknown event and block types read as `unknown` and are skipped.
 */
import { asArray, asNumber, asObject, asString, type JsonObject } from '../shared/lenient-json.ts';

// ---- request (what we send) ----

export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export type AnthropicDocumentSource = AnthropicImageSource | { type: 'text'; media_type: 'text/plain'; data: string };

export type AnthropicTextBlock = { type: 'text'; text: string };
export type AnthropicImageBlock = { type: 'image'; source: AnthropicImageSource };

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | { type: 'document'; source: AnthropicDocumentSource; title?: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string | Array<AnthropicTextBlock | AnthropicImageBlock>; is_error?: boolean }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicMessagesRequest {
  model: string;
  /** Completion cap, tokens (required by the API; thinking included). */
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string;
  stream: true;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id: string };
  /** Extended thinking; `budget_tokens` >= 1024 and < max_tokens. */
  thinking?: { type: 'enabled'; budget_tokens: number };
  /** Structured outputs: the answer's text is a JSON document of `format.schema`. */
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
}

// ---- replies (what we read) ----

/** Usage as the Messages API reports it; all token counts. `input_tokens` excludes cache reads and writes. */
export interface AnthropicUsageView {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  /** Cache writes of every lifetime. */
  cacheCreationInputTokens: number | undefined;
  cacheReadInputTokens: number | undefined;
  /** `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`: the writes by lifetime. */
  cacheCreation5mInputTokens: number | undefined;
  cacheCreation1hInputTokens: number | undefined;
  raw: JsonObject;
}

export interface AnthropicBlockView {
  type: string;
  id: string | undefined;
  name: string | undefined;
  input: unknown;
  text: string | undefined;
  thinking: string | undefined;
  signature: string | undefined;
  data: string | undefined;
}

export interface AnthropicDeltaView {
  type: string;
  text: string | undefined;
  partialJson: string | undefined;
  thinking: string | undefined;
  signature: string | undefined;
}

export interface AnthropicErrorView {
  type: string | undefined;
  message: string | undefined;
}

export type AnthropicEventView =
  | { type: 'message_start'; id: string | undefined; model: string | undefined; usage: AnthropicUsageView | undefined }
  | { type: 'content_block_start'; index: number; block: AnthropicBlockView }
  | { type: 'content_block_delta'; index: number; delta: AnthropicDeltaView }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; stopReason: string | undefined; stopSequence: string | null; usage: AnthropicUsageView | undefined }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: AnthropicErrorView }
  | { type: 'unknown' };

export function readUsage(value: unknown): AnthropicUsageView | undefined {
  const usage = asObject(value);
  if (usage === undefined) return undefined;
  return {
    inputTokens: asNumber(usage['input_tokens']),
    outputTokens: asNumber(usage['output_tokens']),
    cacheCreationInputTokens: asNumber(usage['cache_creation_input_tokens']),
    cacheReadInputTokens: asNumber(usage['cache_read_input_tokens']),
    cacheCreation5mInputTokens: asNumber(asObject(usage['cache_creation'])?.['ephemeral_5m_input_tokens']),
    cacheCreation1hInputTokens: asNumber(asObject(usage['cache_creation'])?.['ephemeral_1h_input_tokens']),
    raw: usage,
  };
}

export function readError(value: unknown): AnthropicErrorView {
  const error = asObject(value);
  return { type: asString(error?.['type']), message: asString(error?.['message']) };
}

export function readBlock(value: unknown): AnthropicBlockView {
  const block = asObject(value) ?? {};
  return {
    type: asString(block['type']) ?? 'unknown',
    id: asString(block['id']),
    name: asString(block['name']),
    input: block['input'],
    text: asString(block['text']),
    thinking: asString(block['thinking']),
    signature: asString(block['signature']),
    data: asString(block['data']),
  };
}

function readDelta(value: unknown): AnthropicDeltaView {
  const delta = asObject(value) ?? {};
  return {
    type: asString(delta['type']) ?? 'unknown',
    text: asString(delta['text']),
    partialJson: asString(delta['partial_json']),
    thinking: asString(delta['thinking']),
    signature: asString(delta['signature']),
  };
}

/** Reads one streaming event (the JSON of its `data:` line; its `type` field names it). */
export function readEvent(value: unknown): AnthropicEventView {
  const event = asObject(value);
  if (event === undefined) return { type: 'unknown' };
  const index = asNumber(event['index']) ?? 0;
  switch (event['type']) {
    case 'message_start': {
      const message = asObject(event['message']) ?? {};
      return { type: 'message_start', id: asString(message['id']), model: asString(message['model']), usage: readUsage(message['usage']) };
    }
    case 'content_block_start':
      return { type: 'content_block_start', index, block: readBlock(event['content_block']) };
    case 'content_block_delta':
      return { type: 'content_block_delta', index, delta: readDelta(event['delta']) };
    case 'content_block_stop':
      return { type: 'content_block_stop', index };
    case 'message_delta': {
      const delta = asObject(event['delta']) ?? {};
      return {
        type: 'message_delta',
        stopReason: asString(delta['stop_reason']),
        stopSequence: asString(delta['stop_sequence']) ?? null,
        usage: readUsage(event['usage']),
      };
    }
    case 'message_stop':
      return { type: 'message_stop' };
    case 'ping':
      return { type: 'ping' };
    case 'error':
      return { type: 'error', error: readError(event['error']) };
    default:
      return { type: 'unknown' };
  }
}

/** A whole `message` body (an upstream that answered a streaming request without streaming). */
export interface AnthropicMessageView {
  id: string | undefined;
  model: string | undefined;
  content: AnthropicBlockView[];
  stopReason: string | undefined;
  stopSequence: string | null;
  usage: AnthropicUsageView | undefined;
}

export function readMessage(value: unknown): AnthropicMessageView | undefined {
  const message = asObject(value);
  // A message without a content array is no answer (a fault, not an empty success).
  if (message === undefined || message['type'] !== 'message' || !Array.isArray(message['content'])) return undefined;
  return {
    id: asString(message['id']),
    model: asString(message['model']),
    content: (asArray(message['content']) ?? []).map(readBlock),
    stopReason: asString(message['stop_reason']),
    stopSequence: asString(message['stop_sequence']) ?? null,
    usage: readUsage(message['usage']),
  };
}
