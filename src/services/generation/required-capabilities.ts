/**
 * Which model capabilities a canonical request needs, and which request field to blame when the
 * model lacks one. Field names default to the chat completions spelling; callers of other formats
 * pass their own (`capabilityParams`), e.g. `{ json_mode: 'text.format' }` for responses.
 */
import type { Capability } from '../../config/index.ts';
import type { GenerationRequest } from '../../core/generation.ts';

export interface CapabilityNeed {
  capability: Capability;
  /** Request field that needs it, reported as `param` of the 400. */
  param: string;
}

const DEFAULT_PARAMS: Partial<Record<Capability, string>> = {
  chat: 'model',
  function_calling: 'tools',
  json_mode: 'response_format',
  streaming: 'stream',
};

function firstImagePath(request: GenerationRequest): string | undefined {
  for (const [messageIndex, message] of request.messages.entries()) {
    for (const [partIndex, part] of message.content.entries()) {
      if (part.type === 'image') return `messages[${messageIndex}].content[${partIndex}]`;
      if (part.type === 'tool-result' && typeof part.content !== 'string' && part.content.some((inner) => inner.type === 'image')) {
        return `messages[${messageIndex}].content[${partIndex}].content`;
      }
    }
  }
  return undefined;
}

/** The needs of `request`, plus `extra` ones the caller names (e.g. `streaming`), without duplicates. */
export function requiredCapabilities(
  request: GenerationRequest,
  extra: readonly Capability[] = [],
  params: Partial<Record<Capability, string>> = {},
): CapabilityNeed[] {
  const needs = new Map<Capability, string>();
  const need = (capability: Capability, fallbackParam: string): void => {
    if (!needs.has(capability)) needs.set(capability, params[capability] ?? fallbackParam);
  };
  need('chat', 'model');
  const image = firstImagePath(request);
  if (image !== undefined) need('vision', image);
  if ((request.tools ?? []).length > 0) need('function_calling', 'tools');
  const format = request.responseFormat?.type;
  if (format === 'json_object' || format === 'json_schema') need('json_mode', 'response_format');
  if (request.thinking !== undefined) need('thinking', 'thinking');
  else if (request.reasoningEffort !== undefined) need('thinking', 'reasoning_effort');
  for (const capability of extra) need(capability, DEFAULT_PARAMS[capability] ?? 'model');
  return [...needs].map(([capability, param]) => ({ capability, param }));
}
