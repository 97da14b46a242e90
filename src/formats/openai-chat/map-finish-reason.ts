import type { FinishReason } from '../../core/generation.ts';
import type { ChatFinishReason } from './wire-types.ts';

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
