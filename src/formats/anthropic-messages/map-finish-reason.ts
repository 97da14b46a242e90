/**
 * Canonical finish reason -> Anthropic `stop_reason`, following docs/wire-contracts.md ("Anthropic SDK":
 * end_turn | max_tokens | stop_sequence | tool_use) plus Anthropic's `refusal` for filtered content.
 */
import type { FinishReason } from '../../core/generation.ts';
import type { AnthropicStopReason } from './wire-types.ts';

export function toAnthropicStopReason(finishReason: FinishReason): AnthropicStopReason {
  switch (finishReason) {
    case 'stop':
      return 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'stop-sequence':
      return 'stop_sequence';
    case 'tool-calls':
      return 'tool_use';
    case 'content-filter':
      return 'refusal';
    case 'error':
      // A `finish` part never carries `error` in practice (failures come as `error` parts); if one does,
      // the turn still ended and whatever content arrived is complete, so it is reported as a normal end.
      return 'end_turn';
  }
}

/** `stop_sequence` is only meaningful when the stop reason says a stop sequence ended the turn. */
export function toAnthropicStopSequence(finishReason: FinishReason, stopSequence: string | null | undefined): string | null {
  return finishReason === 'stop-sequence' ? (stopSequence ?? null) : null;
}
