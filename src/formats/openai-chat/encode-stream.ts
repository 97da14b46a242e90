/**
 * Encodes the canonical stream of parts as OpenAI `chat.completion.chunk` server-sent events.
 *
 * Wire document: docs/wire-contracts.md "Chat completions" (stream order, streamed tool calls, usage chunk,
 * `[DONE]`) and "Streams (chat)" (a chunk with a top-level `error` makes the SDK throw). Order produced:
 * a role chunk `{"role":"assistant","content":""}`, content / reasoning / tool-call deltas, one chunk with
 * `delta: {}` and `finish_reason`, with `include_usage` one chunk with `choices: []` and `usage` (earlier
 * chunks then carry `usage: null`), then `data: [DONE]`. Chat chunks have no `event:` line.
 *
 * This is the hot path of every stream: the constant head and tail of a chunk are serialised once per
 * stream, so each delta costs one JSON.stringify of its own text. The SseEvent `data` is therefore the
 * finished JSON text (a string), which the SSE writer sends as is.
 */
import { batched, batchesOf, type Batched } from '../../core/batched.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { serverError, type ServiceError } from '../../core/service-error.ts';
import type { SseEvent } from '../../core/sse-event.ts';
import { STREAM_ENDED_EARLY_MESSAGE, streamFailure } from '../shared/stream-failure.ts';
import type { ChatCompletionContext } from './encode-response.ts';
import { mapFinishReason } from './map-finish-reason.ts';
import { encodeUsage } from './map-usage.ts';

export interface ChatCompletionStreamOptions {
  /** `stream_options.include_usage`: add the usage chunk before `[DONE]`. */
  includeUsage: boolean;
}

/** The SSE event that ends a successful chat stream. */
export const DONE_EVENT: SseEvent = Object.freeze({ data: '[DONE]' });

/**
 * The `error` chunk that ends a failed stream: the SPEC envelope's `error` object (message, type, code,
 * param, details). The SDK throws an APIError carrying it. No `[DONE]` follows.
 */
export function encodeStreamError(error: ServiceError): SseEvent {
  return {
    data: JSON.stringify({
      error: { message: error.message, type: error.type, code: error.code, param: error.param, details: error.details },
    }),
  };
}

/**
 * Transforms canonical parts into chat completion chunks. Never throws for a failed generation: an
 * `error` part, an exception from `parts`, or `parts` ending without `finish` becomes a final `error`
 * chunk (see encodeStreamError) and the stream ends without `[DONE]`, because the SSE writer has
 * already sent the 200 headers by the time it pulls the first event. Errors that should still get an
 * HTTP status (or a fallback model) must therefore surface before the route hands the parts over: the
 * LanguageModel contract lets a provider throw before its first part.
 */
export function encodeChatCompletionStream(
  parts: AsyncIterable<StreamPart>,
  context: ChatCompletionContext,
  options: ChatCompletionStreamOptions,
): Batched<SseEvent> {
  return batched(() => chatCompletionEvents(parts, context, options));
}

/** The constant texts of one stream's chunks, serialised once per stream. */
function chunkTexts(context: ChatCompletionContext, includeUsage: boolean) {
  const usageNull = includeUsage ? ',"usage":null' : '';
  const prefix = `{"id":${JSON.stringify(context.id)},"object":"chat.completion.chunk","created":${context.created},"model":${JSON.stringify(context.model)},"choices":`;
  const head = `${prefix}[{"index":0,"delta":`;
  const tail = `,"logprobs":null,"finish_reason":null}]${usageNull}}`;
  // The texts around a content or reasoning delta's string, joined once: a delta is then three pieces.
  return {
    usageNull,
    prefix,
    head,
    tail,
    contentHead: `${head}{"content":`,
    reasoningHead: `${head}{"reasoning_content":`,
    deltaTail: `}${tail}`,
  };
}

/** The events of each batch of parts, one array per batch (core/batched.ts). */
async function* chatCompletionEvents(
  parts: AsyncIterable<StreamPart>,
  context: ChatCompletionContext,
  options: ChatCompletionStreamOptions,
): AsyncGenerator<SseEvent[], void, undefined> {
  const { usageNull, prefix, head, tail, contentHead, reasoningHead, deltaTail } = chunkTexts(context, options.includeUsage);
  let started = false;
  // Parts arrive sequenced (core/sequence-blocks.ts): tool calls never interleave, which the SDK's stream
  // helper needs (it treats a change of tool call index as "the previous call is complete"). So each
  // call is its start chunk, then its fragments.
  let toolCallId: string | undefined;
  let toolIndex = -1;
  let toolHasArguments = false;
  const toolArguments = (fragment: string): SseEvent => ({
    data: `${head}{"tool_calls":[{"index":${toolIndex},"function":{"arguments":${JSON.stringify(fragment)}}}]}${tail}`,
  });

  let out: SseEvent[] = [];
  // Set once the stream's last event is handed over: nothing may follow it, not even an error raised
  // by the source's clean-up when the consumer ends the iteration (the batch is handed over emptied).
  let ended = false;
  try {
    for await (const batch of batchesOf(parts)) {
      for (const part of batch) {
        if (part.type === 'error') {
          out.push(encodeStreamError(part.error));
          ended = true;
          yield out.splice(0);
          return;
        }
        if (!started) {
          started = true;
          out.push({ data: `${head}{"role":"assistant","content":""}${tail}` });
        }
        switch (part.type) {
          case 'text-delta':
            if (part.delta.length > 0) out.push({ data: contentHead + JSON.stringify(part.delta) + deltaTail });
            break;
          case 'reasoning-delta':
            // Non-standard field, the OpenAI-compatible convention (vLLM, DeepSeek, xAI) for reasoning text.
            if (part.delta.length > 0) out.push({ data: reasoningHead + JSON.stringify(part.delta) + deltaTail });
            break;
          case 'tool-input-start':
            toolCallId = part.id;
            toolIndex++;
            toolHasArguments = false;
            out.push({
              data: `${head}{"tool_calls":[{"index":${toolIndex},"id":${JSON.stringify(part.id)},"type":"function","function":{"name":${JSON.stringify(part.toolName)},"arguments":""}}]}${tail}`,
            });
            break;
          case 'tool-input-delta':
            if (part.id === toolCallId && part.delta.length > 0) {
              if (!toolHasArguments && part.delta.trim() !== '') toolHasArguments = true;
              out.push(toolArguments(part.delta));
            }
            break;
          case 'tool-input-end':
            // Same rule as assembleResult: a call with no arguments is `{}`, so both paths agree.
            if (part.id === toolCallId && !toolHasArguments) out.push(toolArguments('{}'));
            toolCallId = undefined;
            break;
          case 'finish':
            out.push({ data: `${head}{},"logprobs":null,"finish_reason":"${mapFinishReason(part.finishReason)}"}]${usageNull}}` });
            if (options.includeUsage) out.push({ data: `${prefix}[],"usage":${JSON.stringify(encodeUsage(part.usage))}}` });
            out.push(DONE_EVENT);
            ended = true;
            yield out.splice(0);
            return;
          // Nothing the chat format can carry: block brackets, signatures, redacted reasoning, metadata.
          case 'text-start':
          case 'text-end':
          case 'reasoning-start':
          case 'reasoning-signature':
          case 'reasoning-redacted':
          case 'reasoning-end':
          case 'response-metadata':
            break;
        }
      }
      if (out.length > 0) {
        yield out;
        out = [];
      }
    }
  } catch (error) {
    if (ended) return;
    // Unknown errors get a generic message: their text may name upstream hosts or keys. Events of the
    // batch that were encoded before the failure still go out first.
    out.push(encodeStreamError(streamFailure(error)));
    yield out;
    return;
  }
  yield [encodeStreamError(serverError('internal_error', STREAM_ENDED_EARLY_MESSAGE))];
}
