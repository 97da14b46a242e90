/**
 * Canonical GenerationResult -> Anthropic Messages response body, following docs/wire-contracts.md
 * ("Anthropic SDK": Response) and docs/spec.md "Message response". The edge adds `_metadata`.
 */
import type { AssistantContentPart } from '../../core/generation.ts';
import type { GenerationResult } from '../../core/assemble-result.ts';
import { newId } from '../../core/ids.ts';
import { toAnthropicStopReason, toAnthropicStopSequence } from './map-finish-reason.ts';
import { toAnthropicUsage } from './map-usage.ts';
import type { AnthropicContentBlock, AnthropicMessage } from './wire-types.ts';

export interface MessagesResponseOptions {
  /** Model id echoed in `model`: the one the client asked for. */
  model: string;
  /** Message id (`msg_...`); a new one when omitted. */
  messageId?: string;
}

export function encodeMessagesResponse(result: GenerationResult, options: MessagesResponseOptions): AnthropicMessage {
  return {
    id: options.messageId ?? newId.message(),
    type: 'message',
    role: 'assistant',
    model: options.model,
    content: result.content.map(toAnthropicContentBlock),
    stop_reason: toAnthropicStopReason(result.finishReason),
    stop_sequence: toAnthropicStopSequence(result.finishReason, result.stopSequence),
    usage: toAnthropicUsage(result.usage),
  };
}

/** One canonical assistant part as an Anthropic content block. */
export function toAnthropicContentBlock(part: AssistantContentPart): AnthropicContentBlock {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'reasoning':
      if (part.redactedData !== undefined) return { type: 'redacted_thinking', data: part.redactedData };
      // Anthropic clients expect `signature` on every thinking block; backends without signatures give ''.
      return { type: 'thinking', thinking: part.text, signature: part.signature ?? '' };
    case 'tool-call':
      return { type: 'tool_use', id: toolUseId(part.id), name: part.name, input: parseToolInput(part.input) };
  }
}

/** The canonical call id is kept verbatim so that the client's tool_result finds the backend's call; only an empty one is replaced. */
export function toolUseId(canonicalId: string): string {
  return canonicalId === '' ? newId.toolUse() : canonicalId;
}

/**
 * Anthropic `input` must be a JSON object. A backend that produced invalid JSON, or JSON that is not an
 * object, yields `{}`: the client still gets a well-formed tool_use block (and can answer it with an
 * error tool_result) instead of the whole answer failing after the backend already spent the tokens.
 */
export function parseToolInput(jsonText: string): Record<string, unknown> {
  if (jsonText.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(jsonText);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
