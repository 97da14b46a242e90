/**
 * Canonical stream parts -> Anthropic Messages server-sent events, following docs/wire-contracts.md
 * ("Anthropic SDK": Stream) and docs/spec.md "Events". Every event carries an `event:` name equal to its
 * payload's `type` (the SDKs drop events without one). Order:
 *   message_start, then per block content_block_start / content_block_delta... / content_block_stop with
 *   indexes 0, 1, 2..., then message_delta (stop_reason, stop_sequence, usage), then message_stop;
 *   or, once the stream has begun, a final `error` event.
 *
 * Blocks arrive sequenced (core/sequence-blocks.ts: they never overlap), so each canonical block maps
 * to one Anthropic block with the next index: this file only maps, it holds nothing back. Events leave in
 * one array per batch of parts (core/batched.ts).
 */
import { batched, batchesOf, type Batched } from '../../core/batched.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { emptyUsage } from '../../core/usage.ts';
import { newId } from '../../core/ids.ts';
import type { SseEvent } from '../../core/sse-event.ts';
import { endedEarly, failureAfterStart } from '../shared/stream-failure.ts';
import { messagesErrorEvent } from './error-envelope.ts';
import { toolUseId } from './encode-response.ts';
import { toAnthropicStopReason, toAnthropicStopSequence } from './map-finish-reason.ts';
import { toAnthropicStreamUsage } from './map-usage.ts';
import type { AnthropicContentBlockDelta, AnthropicContentBlockStart, AnthropicStreamEventData } from './wire-types.ts';

export interface MessagesStreamOptions {
  /** Model id echoed in `message_start`: the one the client asked for. */
  model: string;
  /** Message id (`msg_...`); a new one when omitted. */
  messageId?: string;
  /**
   * Prompt tokens known before generation (e.g. a local count), shown in `message_start.usage`; 0 when
   * omitted. The backend's figure follows in `message_delta.usage`, which the SDKs use for the final message.
   */
  inputTokens?: number;
}

/**
 * Encodes a canonical stream as Anthropic events.
 *
 * Nothing is emitted until the first part that is neither `response-metadata` nor `error` arrives. An
 * error before that point (thrown by the source, or an `error` part) is THROWN, so that the edge can still
 * answer with a proper HTTP status if it has not written anything. Once message_start is emitted,
 * errors become a final `event: error` and the iterable ends; a source that ends without `finish` is
 * reported the same way (internal_error). Returning early (client gone) returns the source iterator,
 * which lets the provider abort its upstream call.
 */
export function encodeMessagesStream(parts: AsyncIterable<StreamPart>, options: MessagesStreamOptions): Batched<SseEvent> {
  return batched(() => messagesEvents(parts, options));
}

/** The events of each batch of parts, one array per batch (core/batched.ts). */
async function* messagesEvents(
  parts: AsyncIterable<StreamPart>,
  options: MessagesStreamOptions,
): AsyncGenerator<SseEvent[], void, undefined> {
  const messageId = options.messageId ?? newId.message();
  const blocks = new BlockIndexes();
  let started = false;
  let out: SseEvent[] = [];
  // Set once the last event is handed over: nothing may follow it, not even an error raised by the
  // source's clean-up when the consumer ends the iteration (the batch is handed over emptied).
  let ended = false;
  try {
    for await (const batch of batchesOf(parts)) {
      for (const part of batch) {
        if (part.type === 'response-metadata') continue;
        if (part.type === 'error') {
          // Before message_start nothing was pushed, so throwing loses no event.
          out.push(messagesErrorEvent(failureAfterStart(part.error, started)));
          ended = true;
          yield out.splice(0);
          return;
        }
        if (!started) {
          started = true;
          out.push(messageStartEvent(messageId, options));
        }
        switch (part.type) {
          case 'text-start':
            blocks.start(`text:${part.id}`, { type: 'text', text: '' }, out);
            break;
          case 'text-delta':
            if (part.delta !== '') blocks.delta(`text:${part.id}`, 'text_delta', 'text', part.delta, out);
            break;
          case 'text-end':
            blocks.end(`text:${part.id}`, out);
            break;
          case 'reasoning-start':
            blocks.start(`reasoning:${part.id}`, { type: 'thinking', thinking: '', signature: '' }, out);
            break;
          case 'reasoning-delta':
            if (part.delta !== '') blocks.delta(`reasoning:${part.id}`, 'thinking_delta', 'thinking', part.delta, out);
            break;
          case 'reasoning-signature':
            if (part.signature !== '') blocks.delta(`reasoning:${part.id}`, 'signature_delta', 'signature', part.signature, out);
            break;
          case 'reasoning-end':
            blocks.end(`reasoning:${part.id}`, out);
            break;
          case 'reasoning-redacted':
            blocks.complete({ type: 'redacted_thinking', data: part.data }, out);
            break;
          case 'tool-input-start':
            blocks.start(`tool:${part.id}`, { type: 'tool_use', id: toolUseId(part.id), name: part.toolName, input: {} }, out);
            break;
          case 'tool-input-delta':
            if (part.delta !== '') blocks.delta(`tool:${part.id}`, 'input_json_delta', 'partial_json', part.delta, out);
            break;
          case 'tool-input-end':
            blocks.end(`tool:${part.id}`, out);
            break;
          case 'finish':
            blocks.stopOpen(out);
            out.push(
              event({
                type: 'message_delta',
                delta: {
                  stop_reason: toAnthropicStopReason(part.finishReason),
                  stop_sequence: toAnthropicStopSequence(part.finishReason, part.stopSequence),
                },
                usage: toAnthropicStreamUsage(part.usage),
              }),
              event({ type: 'message_stop' }),
            );
            ended = true;
            yield out.splice(0);
            return;
        }
      }
      if (out.length > 0) {
        yield out;
        out = [];
      }
    }
  } catch (error) {
    if (ended) return;
    // Events of the batch that were encoded before the failure still go out first.
    out.push(messagesErrorEvent(failureAfterStart(error, started)));
    yield out;
    return;
  }
  yield [messagesErrorEvent(endedEarly(started, 'The generation stream ended before it finished.'))];
}

/** The Anthropic keep-alive: `event: ping` with `{"type":"ping"}`, valid anywhere in a stream. */
export function messagesPingEvent(): SseEvent {
  return event({ type: 'ping' });
}

/** Each delta type's one string field: `text_delta` -> `text`, `input_json_delta` -> `partial_json`, ... */
type DeltaFields = { [Delta in AnthropicContentBlockDelta as Delta['type']]: Exclude<keyof Delta, 'type'> & string };

function event(data: AnthropicStreamEventData): SseEvent {
  return { event: data.type, data };
}

function messageStartEvent(messageId: string, options: MessagesStreamOptions): SseEvent {
  return event({
    type: 'message_start',
    message: {
      id: messageId,
      type: 'message',
      role: 'assistant',
      model: options.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: toAnthropicStreamUsage({ ...emptyUsage(), inputTokens: options.inputTokens ?? 0 }),
    },
  });
}

/** Wire indexes of the (sequenced, so never overlapping) blocks: one open at a time. */
class BlockIndexes {
  private openKey: string | undefined;
  private nextIndex = 0;

  start(key: string, start: AnthropicContentBlockStart, out: SseEvent[]): void {
    this.stopOpen(out);
    this.openKey = key;
    out.push(event({ type: 'content_block_start', index: this.nextIndex, content_block: start }));
  }

  /** A block that is complete as it starts (redacted thinking). */
  complete(start: AnthropicContentBlockStart, out: SseEvent[]): void {
    this.start('complete', start, out);
    this.stopOpen(out);
  }

  /**
   * Deltas of a block that is not the open one are dropped, as assembleResult drops them. The hot path
   * of a stream: the event's JSON is written around the delta's own JSON.stringify (~4x cheaper than
   * stringifying an object per delta), in the order an object would give: type, index, delta {type, field}.
   */
  delta<Type extends keyof DeltaFields>(key: string, type: Type, field: DeltaFields[Type], value: string, out: SseEvent[]): void {
    if (key !== this.openKey) return;
    out.push({
      event: 'content_block_delta',
      data: `{"type":"content_block_delta","index":${this.nextIndex},"delta":{"type":"${type}","${field}":${JSON.stringify(value)}}}`,
    });
  }

  end(key: string, out: SseEvent[]): void {
    if (key === this.openKey) this.stopOpen(out);
  }

  stopOpen(out: SseEvent[]): void {
    if (this.openKey === undefined) return;
    out.push(event({ type: 'content_block_stop', index: this.nextIndex++ }));
    this.openKey = undefined;
  }
}
