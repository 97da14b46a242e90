/**
 * The Anthropic Messages wire shapes this service produces, as docs/wire-contracts.md ("Anthropic SDK") and
 * docs/spec.md "Message response" / "Events" describe them. Only what we emit is typed here; requests are
 * validated field by field in decode-request.ts instead of being trusted through a type.
 */

/** `stop_reason` values we emit (docs/wire-contracts.md lists the first four; `refusal` is Anthropic's content-filter stop). */
export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  /** The canonical tool-call id, verbatim (`toolu_...` from Anthropic-style backends, `call_...` from OpenAI-style ones). */
  id: string;
  name: string;
  /** The tool arguments as a JSON object. */
  input: Record<string, unknown>;
}

export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  /** Opaque backend signature, `''` when the backend gives none. */
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  /** Opaque encrypted reasoning, passed back verbatim by the client. */
  data: string;
}

export type AnthropicContentBlock = AnthropicTextBlock | AnthropicToolUseBlock | AnthropicThinkingBlock | AnthropicRedactedThinkingBlock;

/**
 * Anthropic usage. Unlike the canonical `Usage`, `input_tokens` EXCLUDES cache reads and writes; the
 * three input figures add up to the whole prompt. All figures are token counts.
 */
export interface AnthropicUsage {
  /** Prompt tokens neither read from nor written to a prompt cache. */
  input_tokens: number;
  /** Completion tokens, thinking included. */
  output_tokens: number;
  /** Prompt tokens written to the prompt cache (both lifetimes). */
  cache_creation_input_tokens: number;
  /** Prompt tokens read from the prompt cache. */
  cache_read_input_tokens: number;
  /**
   * The cache writes by lifetime, adding up to `cache_creation_input_tokens`. In whole messages only: a
   * stream's `message_start` goes out before the backend's figures are known, and the SDKs never update
   * this object from `message_delta`, so a streamed value would stay wrong in their final message.
   */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** A complete (non-streaming) message, and the `message` of `message_start` (with empty content). */
export interface AnthropicMessage {
  /** `msg_` + 24 alphanumerics. */
  id: string;
  type: 'message';
  role: 'assistant';
  /** The model id as the client asked for it. */
  model: string;
  content: AnthropicContentBlock[];
  /** Null only in `message_start`. */
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** Block as announced by `content_block_start`: empty text/thinking, `{}` tool input. */
export type AnthropicContentBlockStart =
  AnthropicTextBlock | AnthropicToolUseBlock | AnthropicThinkingBlock | AnthropicRedactedThinkingBlock;

export type AnthropicContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string };

/** Error `type` values of Anthropic bodies and `error` events (docs/wire-contracts.md, by HTTP status). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

/** Payloads of the streaming events; each one's `type` equals its SSE `event:` name. */
export type AnthropicStreamEventData =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: AnthropicContentBlockStart }
  | { type: 'content_block_delta'; index: number; delta: AnthropicContentBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicStopReason; stop_sequence: string | null };
      usage: AnthropicUsage;
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: AnthropicErrorType; message: string; code?: string } };

/** `POST /v1/messages/count_tokens` answer. */
export interface AnthropicTokenCount {
  /** Estimated prompt tokens of the request (the local count of core/count-tokens.ts). */
  input_tokens: number;
}
