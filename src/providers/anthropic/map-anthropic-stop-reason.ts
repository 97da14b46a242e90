/**
 * Maps `stop_reason` of the Anthropic Messages API
 * (https://docs.anthropic.com/en/api/handling-stop-reasons) to the canonical FinishReason.
 */
import type { FinishReason } from '../../core/generation.ts';

/**
 * `jsonToolUsed`: the request asked for JSON output, which is obtained through a forced `json` tool
 * (convert-to-anthropic-request.ts); its `tool_use` stop is then an ordinary end of the answer.
 */
export function mapAnthropicStopReason(stopReason: string | undefined, jsonToolUsed = false): FinishReason {
  switch (stopReason) {
    case 'end_turn':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'stop_sequence':
      return 'stop-sequence';
    case 'tool_use':
      return jsonToolUsed ? 'stop' : 'tool-calls';
    case 'refusal':
      return 'content-filter';
    default:
      return 'stop';
  }
}
