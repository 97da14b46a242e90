/**
 * Maps node-llama-cpp's `LlamaChatResponse.metadata.stopReason` (node-llama-cpp 3.x,
 * `dist/evaluator/LlamaChat/LlamaChat.d.ts`, type `LlamaChatResponse`) to the canonical FinishReason.
 */
import type { FinishReason } from '../../core/generation.ts';

/** The stop reasons node-llama-cpp 3.x reports. */
export type LlamaCppStopReason = 'eogToken' | 'stopGenerationTrigger' | 'functionCalls' | 'maxTokens' | 'abort' | 'customStopTrigger';

export function mapLlamaCppFinishReason(stopReason: LlamaCppStopReason): FinishReason {
  switch (stopReason) {
    // An end-of-generation token, or the chat template's end-of-turn text: the model finished its turn.
    case 'eogToken':
    case 'stopGenerationTrigger':
      return 'stop';
    case 'customStopTrigger':
      return 'stop-sequence';
    case 'maxTokens':
      return 'length';
    case 'functionCalls':
      return 'tool-calls';
    case 'abort':
      return 'error';
  }
}

/**
 * The request's stop sequence that ended generation. node-llama-cpp reports the trigger as the list of
 * strings and tokens it was given; the request gave plain strings, so the trigger is one of them.
 */
export function matchedStopSequence(trigger: ReadonlyArray<string | number>, stopSequences: readonly string[]): string | null {
  const text = trigger.filter((piece): piece is string => typeof piece === 'string').join('');
  return stopSequences.find((sequence) => sequence === text) ?? (text === '' ? null : text);
}
