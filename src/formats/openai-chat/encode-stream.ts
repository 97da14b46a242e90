/**
 * Encodes the canonical stream of parts as OpenAI `chat.completion.chunk` server-sent events.
 *
 * Wire document: wire-contracts.md "Chat completions" (stream order, streamed tool calls, usage chunk,
 * `[DONE]`) and "Streams (chat)" (a chunk with a top-level `error` makes the SDK throw). Order produced:
 * a role chunk `{"role":"assistant","content":""}`, content / reasoning / tool-call deltas, one chunk with
 * `delta: {}` and `finish_reason`, with `include_usage` one chunk with `choices: []` and `usage` (earlier
 * chunks then carry `usage: null`), then `data: [DONE]`. Chat chunks have no `event:` line.
 *
 * This is the hot path of every stream: the constant head and tail of a chunk are serialised once per
 * stream, so each delta costs one JSON.stringify of its own text. The SseEvent `data` is therefore the
 * finished JSON text (a string), which the SSE writer sends as is.
 */
import type { StreamPart } from '../../core/stream-parts.ts';
import { isServiceError, serverError, type ServiceError } from '../../core/service-error.ts';
import type { SseEvent } from '../sse-event.ts';
import { encodeUsage, mapFinishReason, type ChatCompletionContext } from './encode-response.ts';

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
    data: JSON.stringify({ error: { message: error.message, type: error.type, code: error.code, param: error.param, details: error.details } }),
  };
}

interface ToolCallState {
  id: string;
  toolName: string;
  /** Position in `tool_calls`, given when the call is first sent (calls are sent in the order they started). */
  index: number;
  /** Whether any non-blank argument text was seen; an empty argument list is closed as `{}`. */
  hasArguments: boolean;
  /** `tool-input-end` seen. */
  ended: boolean;
  /** Argument text received while another call was being sent. */
  buffered: string;
}

/**
 * Transforms canonical parts into chat completion chunks. Never throws for a failed generation: an
 * `error` part, an exception from `parts`, or `parts` ending without `finish` becomes a final `error`
 * chunk (see encodeStreamError) and the stream ends without `[DONE]`, because the SSE writer has
 * already sent the 200 headers by the time it pulls the first event. Errors that should still get an
 * HTTP status (or a fallback model) must therefore surface before the route hands the parts over: the
 * LanguageModel contract lets a provider throw before its first part.
 */
export async function* encodeChatCompletionStream(
  parts: AsyncIterable<StreamPart>,
  context: ChatCompletionContext,
  options: ChatCompletionStreamOptions,
): AsyncGenerator<SseEvent, void, undefined> {
  const usageNull = options.includeUsage ? ',"usage":null' : '';
  const prefix = `{"id":${JSON.stringify(context.id)},"object":"chat.completion.chunk","created":${context.created},"model":${JSON.stringify(context.model)},"system_fingerprint":null,"choices":`;
  const head = `${prefix}[{"index":0,"delta":`;
  const tail = `,"logprobs":null,"finish_reason":null}]${usageNull}}`;

  let started = false;
  // Tool calls are sent one after the other, never interleaved: the SDK's stream helper treats a change
  // of tool call index as "the previous call is complete" (and then parses its arguments), so fragments
  // of calls that start while another is being sent are held back until that one ends.
  const toolCalls = new Map<string, ToolCallState>();
  const waitingCalls: ToolCallState[] = [];
  let activeCall: ToolCallState | undefined;
  let nextToolIndex = 0;
  const toolCallStart = (call: ToolCallState): string =>
    `${head}{"tool_calls":[{"index":${call.index},"id":${JSON.stringify(call.id)},"type":"function","function":{"name":${JSON.stringify(call.toolName)},"arguments":""}}]}${tail}`;
  const toolCallArguments = (call: ToolCallState, fragment: string): string =>
    `${head}{"tool_calls":[{"index":${call.index},"function":{"arguments":${JSON.stringify(fragment)}}}]}${tail}`;
  /** Sends waiting calls (start, held-back arguments, `{}` if ended empty) until one is still open. */
  const promoteWaitingCalls = (flushAll: boolean): string[] => {
    const chunks: string[] = [];
    while (activeCall === undefined && waitingCalls.length > 0) {
      const call = waitingCalls.shift()!;
      call.index = nextToolIndex++;
      chunks.push(toolCallStart(call));
      if (call.buffered.length > 0) chunks.push(toolCallArguments(call, call.buffered));
      if (call.ended) {
        // Same rule as assembleResult: a call with no arguments is `{}`, so both paths agree.
        if (!call.hasArguments) chunks.push(toolCallArguments(call, '{}'));
      } else if (!flushAll) {
        activeCall = call;
      }
    }
    return chunks;
  };

  try {
    for await (const part of parts) {
      if (part.type === 'error') {
        yield encodeStreamError(part.error);
        return;
      }
      if (!started) {
        started = true;
        yield { data: `${head}{"role":"assistant","content":""}${tail}` };
      }
      switch (part.type) {
        case 'text-delta':
          if (part.delta.length > 0) yield { data: `${head}{"content":${JSON.stringify(part.delta)}}${tail}` };
          break;
        case 'reasoning-delta':
          // Non-standard field, the OpenAI-compatible convention (vLLM, DeepSeek, xAI) for reasoning text.
          if (part.delta.length > 0) yield { data: `${head}{"reasoning_content":${JSON.stringify(part.delta)}}${tail}` };
          break;
        case 'tool-input-start': {
          const call: ToolCallState = { id: part.id, toolName: part.toolName, index: -1, hasArguments: false, ended: false, buffered: '' };
          toolCalls.set(part.id, call);
          if (activeCall === undefined) {
            call.index = nextToolIndex++;
            activeCall = call;
            yield { data: toolCallStart(call) };
          } else {
            waitingCalls.push(call);
          }
          break;
        }
        case 'tool-input-delta': {
          const call = toolCalls.get(part.id);
          if (call === undefined || part.delta.length === 0) break;
          if (!call.hasArguments && part.delta.trim().length > 0) call.hasArguments = true;
          if (call === activeCall) yield { data: toolCallArguments(call, part.delta) };
          else call.buffered += part.delta;
          break;
        }
        case 'tool-input-end': {
          const call = toolCalls.get(part.id);
          if (call === undefined || call.ended) break;
          call.ended = true;
          if (call !== activeCall) break;
          // Same rule as assembleResult: a call with no arguments is `{}`, so both paths agree.
          if (!call.hasArguments) yield { data: toolCallArguments(call, '{}') };
          activeCall = undefined;
          for (const data of promoteWaitingCalls(false)) yield { data };
          break;
        }
        case 'finish':
          activeCall = undefined;
          for (const data of promoteWaitingCalls(true)) yield { data };
          yield { data: `${head}{},"logprobs":null,"finish_reason":"${mapFinishReason(part.finishReason)}"}]${usageNull}}` };
          if (options.includeUsage) yield { data: `${prefix}[],"usage":${JSON.stringify(encodeUsage(part.usage))}}` };
          yield DONE_EVENT;
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
  } catch (error) {
    // Unknown errors get a generic message: their text may name upstream hosts or keys.
    yield encodeStreamError(isServiceError(error) ? error : serverError('internal_error', 'The generation failed while streaming.', error));
    return;
  }
  yield encodeStreamError(serverError('internal_error', 'The generation stream ended before it was complete.'));
}
