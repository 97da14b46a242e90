/**
 * Canonical stream parts -> Anthropic Messages server-sent events, following wire-contracts.md
 * ("Anthropic SDK": Stream) and SPEC.md "Events". Every event carries an `event:` name equal to its
 * payload's `type` (the SDKs drop events without one). Order:
 *   message_start, then per block content_block_start / content_block_delta... / content_block_stop with
 *   indexes 0, 1, 2..., then message_delta (stop_reason, stop_sequence, usage), then message_stop;
 *   or, once the stream has begun, a final `error` event.
 *
 * Nesting. Anthropic blocks never overlap: a block is stopped before the next one starts. Canonical
 * blocks may interleave (an OpenAI-compatible upstream streams parallel tool calls by index, and may
 * only end them all at the finish). We serialise by BUFFERING: the block that started first owns the
 * wire until it ends; deltas of blocks that started later are held, and each such block is replayed
 * (start, held deltas) as soon as every block before it has ended, then streams live. The alternative,
 * closing the open block as soon as another starts, would lose any later delta of the closed block (a
 * tool_use cannot be reopened), so it is not used. The cost: a later block's first bytes wait until the
 * earlier block ends; providers should end a block as soon as they know it is complete. Blocks still
 * open at `finish` are closed in start order. Nothing is ever dropped or reordered within a block, and
 * the wire order equals the start order, so `index` matches the non-streaming `content` order.
 */
import type { StreamPart } from '../../core/stream-parts.ts';
import { newId } from '../../core/ids.ts';
import { serverError } from '../../core/service-error.ts';
import type { SseEvent } from '../sse-event.ts';
import { messagesErrorEvent } from './error-envelope.ts';
import { toolUseId } from './encode-response.ts';
import { toAnthropicStopReason, toAnthropicStopSequence } from './map-stop-reason.ts';
import { toAnthropicUsage } from './map-usage.ts';
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
 * answer with a proper HTTP status if it has not written anything. After `message_start` was yielded,
 * errors become a final `event: error` and the iterable ends; a source that ends without `finish` is
 * reported the same way (internal_error). Returning early (client gone) returns the source iterator,
 * which lets the provider abort its upstream call.
 */
export async function* encodeMessagesStream(parts: AsyncIterable<StreamPart>, options: MessagesStreamOptions): AsyncGenerator<SseEvent, void, undefined> {
  const messageId = options.messageId ?? newId.message();
  const blocks = new NestedBlockWriter();
  let started = false;
  try {
    for await (const part of parts) {
      if (part.type === 'response-metadata') continue;
      if (part.type === 'error') {
        if (!started) throw part.error;
        yield messagesErrorEvent(part.error);
        return;
      }
      const out: SseEvent[] = [];
      if (!started) {
        started = true;
        out.push(messageStartEvent(messageId, options));
      }
      switch (part.type) {
        case 'text-start':
          blocks.start(`text:${part.id}`, { type: 'text', text: '' }, out);
          break;
        case 'text-delta':
          if (part.delta !== '') blocks.delta(`text:${part.id}`, { type: 'text_delta', text: part.delta }, out);
          break;
        case 'text-end':
          blocks.end(`text:${part.id}`, out);
          break;
        case 'reasoning-start':
          blocks.start(`reasoning:${part.id}`, { type: 'thinking', thinking: '', signature: '' }, out);
          break;
        case 'reasoning-delta':
          if (part.delta !== '') blocks.delta(`reasoning:${part.id}`, { type: 'thinking_delta', thinking: part.delta }, out);
          break;
        case 'reasoning-signature':
          if (part.signature !== '') blocks.delta(`reasoning:${part.id}`, { type: 'signature_delta', signature: part.signature }, out);
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
          if (part.delta !== '') blocks.delta(`tool:${part.id}`, { type: 'input_json_delta', partial_json: part.delta }, out);
          break;
        case 'tool-input-end':
          blocks.end(`tool:${part.id}`, out);
          break;
        case 'finish':
          blocks.endAll(out);
          out.push(
            event({
              type: 'message_delta',
              delta: {
                stop_reason: toAnthropicStopReason(part.finishReason),
                stop_sequence: toAnthropicStopSequence(part.finishReason, part.stopSequence),
              },
              usage: toAnthropicUsage(part.usage),
            }),
            event({ type: 'message_stop' }),
          );
          for (const event of out) yield event;
          return;
      }
      // `yield*` over an array would await once more per event (async-from-sync iteration); this is the hot path.
      for (const event of out) yield event;
    }
  } catch (error) {
    if (!started) throw error;
    yield messagesErrorEvent(error);
    return;
  }
  const incomplete = serverError('internal_error', 'The generation stream ended before it finished.');
  if (!started) throw incomplete;
  yield messagesErrorEvent(incomplete);
}

/** The Anthropic keep-alive: `event: ping` with `{"type":"ping"}`, valid anywhere in a stream. */
export function messagesPingEvent(): SseEvent {
  return event({ type: 'ping' });
}

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
      usage: { input_tokens: options.inputTokens ?? 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  });
}

interface BlockState {
  start: AnthropicContentBlockStart;
  /** Deltas received while an earlier block held the wire. */
  held: AnthropicContentBlockDelta[];
  /** The canonical block has ended. */
  ended: boolean;
  /** Wire index, set when the block is started on the wire. */
  index?: number;
}

/** Serialises possibly interleaved canonical blocks into nested Anthropic blocks (see the file comment). */
class NestedBlockWriter {
  /** Blocks not yet stopped on the wire, in start order; the first one owns the wire. */
  private readonly queue: BlockState[] = [];
  /** Open canonical blocks by `<kind>:<id>`. */
  private readonly open = new Map<string, BlockState>();
  private nextIndex = 0;

  start(key: string, start: AnthropicContentBlockStart, out: SseEvent[]): void {
    const state: BlockState = { start, held: [], ended: false };
    this.open.set(key, state);
    this.queue.push(state);
    if (this.queue.length === 1) this.advance(out);
  }

  /** A block that is complete as it starts (redacted thinking). */
  complete(start: AnthropicContentBlockStart, out: SseEvent[]): void {
    this.queue.push({ start, held: [], ended: true });
    if (this.queue.length === 1) this.advance(out);
  }

  /** Deltas for unknown or ended blocks are ignored, as assembleResult ignores them, so both paths agree. */
  delta(key: string, delta: AnthropicContentBlockDelta, out: SseEvent[]): void {
    const state = this.open.get(key);
    if (state === undefined) return;
    if (state.index === undefined) state.held.push(delta);
    else out.push(event({ type: 'content_block_delta', index: state.index, delta }));
  }

  end(key: string, out: SseEvent[]): void {
    const state = this.open.get(key);
    if (state === undefined) return;
    this.open.delete(key);
    state.ended = true;
    if (state === this.queue[0]) this.advance(out);
  }

  endAll(out: SseEvent[]): void {
    for (const state of this.queue) state.ended = true;
    this.open.clear();
    this.advance(out);
  }

  /** Starts the head block on the wire if needed, and while it has ended, stops it and moves to the next. */
  private advance(out: SseEvent[]): void {
    for (let head = this.queue[0]; head !== undefined; head = this.queue[0]) {
      if (head.index === undefined) {
        const index = this.nextIndex++;
        head.index = index;
        out.push(event({ type: 'content_block_start', index, content_block: head.start }));
        for (const delta of head.held) out.push(event({ type: 'content_block_delta', index, delta }));
        head.held = [];
      }
      if (!head.ended) return;
      out.push(event({ type: 'content_block_stop', index: head.index }));
      this.queue.shift();
    }
  }
}
