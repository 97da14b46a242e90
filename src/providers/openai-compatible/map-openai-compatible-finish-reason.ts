/**
 * Maps `choices[].finish_reason` of the OpenAI Chat Completions API
 * (https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices) to the canonical
 * FinishReason. OpenAI-compatible servers add their own values (vLLM `abort`, Ollama `load`); those
 * that do not mean an error read as a normal stop.
 */
import type { FinishReason } from '../../core/generation.ts';

export function mapOpenAICompatibleFinishReason(finishReason: string | undefined): FinishReason {
  switch (finishReason) {
    case 'stop':
    case 'eos':
      return 'stop';
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    case 'content_filter':
      return 'content-filter';
    case 'abort':
    case 'error':
      return 'error';
    default:
      return 'stop';
  }
}
