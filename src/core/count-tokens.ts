/**
 * Local token counting with gpt-tokenizer (o200k_base ranks, offline). Used when a backend reports no
 * usage (figures are then marked `estimated`), for rate-limit reservations before a call, and for
 * `count_tokens`. Counts of non-OpenAI models are approximations by nature.
 */
import { countTokens } from 'gpt-tokenizer';
import type { GenerationRequest, Message } from './generation.ts';

/** Per-message framing overhead, as OpenAI's chat format counts it. */
const TOKENS_PER_MESSAGE = 3;
/** Tokens charged for one image part when its size is unknown (OpenAI low-detail figure). */
const TOKENS_PER_IMAGE = 85;

export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
}

function countMessageTokens(message: Message): number {
  let tokens = TOKENS_PER_MESSAGE;
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
        tokens += countTextTokens(part.text);
        break;
      case 'image':
        tokens += TOKENS_PER_IMAGE;
        break;
      case 'document':
        tokens += countTextTokens(part.text ?? '') + (part.url !== undefined && part.text === undefined ? TOKENS_PER_IMAGE : 0);
        break;
      case 'reasoning':
        tokens += countTextTokens(part.text);
        break;
      case 'tool-call':
        tokens += countTextTokens(part.name) + countTextTokens(part.input);
        break;
      case 'tool-result':
        tokens +=
          typeof part.content === 'string'
            ? countTextTokens(part.content)
            : part.content.reduce((sum, inner) => sum + (inner.type === 'text' ? countTextTokens(inner.text) : TOKENS_PER_IMAGE), 0);
        break;
    }
  }
  return tokens;
}

/** Estimated prompt tokens of a canonical request: system, messages, tool definitions and response schema. */
export function countRequestTokens(request: GenerationRequest): number {
  let tokens = 3; // reply priming
  if (request.system) tokens += TOKENS_PER_MESSAGE + countTextTokens(request.system);
  for (const message of request.messages) tokens += countMessageTokens(message);
  for (const tool of request.tools ?? []) {
    tokens += countTextTokens(tool.name) + countTextTokens(tool.description ?? '') + countTextTokens(JSON.stringify(tool.inputSchema));
  }
  if (request.responseFormat?.type === 'json_schema') tokens += countTextTokens(JSON.stringify(request.responseFormat.schema));
  return tokens;
}
