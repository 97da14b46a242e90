/**
 * The state of one streamed response (encode-stream.ts maps parts onto it): its output items in
 * output_index order, the open block, the block whose output_item.done is held, and the event numbering.
 * Each method appends the events it gives to the batch it is handed; a delta costs its one event, finished
 * JSON text around the delta's own JSON.stringify (blocks match parts by kind and id, no key string).
 */
import type { FinishReason } from '../../core/generation.ts';
import type { ServiceError } from '../../core/service-error.ts';
import type { SseEvent } from '../../core/sse-event.ts';
import type { Usage } from '../../core/usage.ts';
import {
  buildResponseObject,
  encodeResponseError,
  functionCallItem,
  messageItem,
  reasoningEncryptedContent,
  reasoningItem,
  type ResponseContext,
} from './encode-response.ts';
import { mapFinishReason } from './map-finish-reason.ts';
import { encodeUsage } from './map-usage.ts';
import type { ItemStatus, ResponseObject, ResponseOutputItem } from './wire-types.ts';

type BlockKind = 'text' | 'reasoning' | 'tool';
/** The canonical part kind that opened a block: its deltas, end and signatures match on it and the id. */
type BlockSource = BlockKind | 'redacted';

/** The delta event of each kind of block. */
const DELTA_EVENT_TYPES: Readonly<Record<BlockKind, string>> = {
  text: 'response.output_text.delta',
  reasoning: 'response.reasoning_text.delta',
  tool: 'response.function_call_arguments.delta',
};

/** One canonical block, which is one output item. */
export class Block {
  /** Position in `output`, given when the item is announced; -1 before. */
  outputIndex = -1;
  /** Text, reasoning text or argument JSON received so far. */
  text = '';
  signature: string | undefined = undefined;
  redactedData: string | undefined = undefined;
  callId = '';
  toolName = '';
  /** The delta events' JSON up to the delta string, set when the block is announced (see OutputItems.append). */
  deltaHead = '';
  /** The delta events' JSON from after the delta string up to the sequence number. */
  deltaTail = '';

  constructor(
    readonly kind: BlockKind,
    readonly source: BlockSource,
    /** The canonical block id. */
    readonly id: string,
    /** Output item id (`msg_`/`rs_`/`fc_` + 48 hex). */
    readonly itemId: string,
  ) {}

  is(source: BlockSource, id: string): boolean {
    return this.source === source && this.id === id;
  }
}

type EventFields = Record<string, unknown>;

/**
 * The output items of one streamed response and the event numbering: what the part -> event mapping
 * reads and changes. Blocks never overlap (they arrive sequenced): at most one is open, and at most one,
 * ended, waits with its output_item.done held (see the header).
 */
export class OutputItems {
  /** response.created has been sent. */
  started = false;
  private sequenceNumber = 0;
  /** The open block. */
  private open: Block | undefined = undefined;
  /** The block whose output_item.done is held until the next part. */
  private held: Block | undefined = undefined;
  /** Items in output_index order: finished ones, and the announced ones still open. */
  private readonly output: ResponseOutputItem[] = [];

  constructor(private readonly context: ResponseContext) {}

  event(type: string, fields: EventFields): SseEvent {
    return { event: type, data: { type, ...fields, sequence_number: this.sequenceNumber++ } };
  }

  /**
   * The same event, with its fields already JSON (`"name":value,...`, in the order `event` would write
   * them): for payloads that are sent more than once or are on the hot path, serialised once here.
   */
  private jsonEvent(type: string, fieldsJson: string): SseEvent {
    return { event: type, data: `{"type":"${type}",${fieldsJson},"sequence_number":${this.sequenceNumber++}}` };
  }

  /** response.created and response.in_progress: the same Response twice, serialised once. */
  start(out: SseEvent[]): void {
    this.started = true;
    const response = JSON.stringify(buildResponseObject(this.context, { status: 'in_progress', output: [], usage: null }));
    out.push(this.jsonEvent('response.created', `"response":${response}`));
    out.push(this.jsonEvent('response.in_progress', `"response":${response}`));
  }

  /** A block starts: its item is announced. A repeated start of the open block is ignored. */
  announce(block: Block, out: SseEvent[]): void {
    if (this.open !== undefined && this.open.is(block.source, block.id)) return;
    this.open = block;
    block.outputIndex = this.output.length;
    const outputIndex = block.outputIndex;
    const itemId = block.itemId;
    const contentIndex = block.kind === 'tool' ? '' : ',"content_index":0';
    block.deltaHead = `{"type":"${DELTA_EVENT_TYPES[block.kind]}","item_id":${JSON.stringify(itemId)},"output_index":${outputIndex}${contentIndex},"delta":`;
    block.deltaTail = block.kind === 'text' ? ',"logprobs":[],"sequence_number":' : ',"sequence_number":';
    switch (block.kind) {
      case 'text': {
        const item = { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
        this.output.push(messageItem(itemId, '', 'in_progress'));
        out.push(this.event('response.output_item.added', { output_index: outputIndex, item }));
        out.push(
          this.event('response.content_part.added', {
            item_id: itemId,
            output_index: outputIndex,
            content_index: 0,
            part: { type: 'output_text', text: '', annotations: [] },
          }),
        );
        break;
      }
      case 'reasoning': {
        // Announced without content: content_part.added appends the reasoning text part at index 0.
        const item = { ...reasoningItem(itemId, '', null, 'in_progress'), content: [] };
        this.output.push({ ...item, content: [] });
        out.push(this.event('response.output_item.added', { output_index: outputIndex, item }));
        if (block.redactedData === undefined) {
          out.push(
            this.event('response.content_part.added', {
              item_id: itemId,
              output_index: outputIndex,
              content_index: 0,
              part: { type: 'reasoning_text', text: '' },
            }),
          );
        }
        break;
      }
      case 'tool': {
        const item = functionCallItem(itemId, block.callId, block.toolName, '', 'in_progress');
        this.output.push(functionCallItem(itemId, block.callId, block.toolName, '', 'in_progress'));
        out.push(this.event('response.output_item.added', { output_index: outputIndex, item }));
        break;
      }
    }
  }

  /**
   * One event per streamed delta of the open block (others are dropped): the hot path of a streamed
   * response, so its JSON is the block's constant head and tail around the delta's own JSON.stringify
   * (~5x cheaper than stringifying an object per delta). Fields in the order the other events use: type,
   * item_id, output_index, content_index (text and reasoning), delta, logprobs (text), sequence_number.
   */
  append(source: BlockSource, id: string, delta: string, out: SseEvent[]): void {
    const open = this.open;
    if (open === undefined || !open.is(source, id) || delta.length === 0) return;
    open.text += delta;
    out.push({
      event: DELTA_EVENT_TYPES[open.kind],
      data: `${open.deltaHead}${JSON.stringify(delta)}${open.deltaTail}${this.sequenceNumber++}}`,
    });
  }

  /** The open block ends; its output_item.done waits for the next part (it may be cut by the finish). */
  end(source: BlockSource, id: string): void {
    if (this.open === undefined || !this.open.is(source, id)) return;
    this.held = this.open;
    this.open = undefined;
  }

  /** A reasoning signature, for the open block or the one whose done event is still held. */
  sign(id: string, signature: string): void {
    const block = this.open?.is('reasoning', id) ? this.open : this.held?.is('reasoning', id) ? this.held : undefined;
    if (block !== undefined) block.signature = (block.signature ?? '') + signature;
  }

  /** Sends the held output_item.done, as `completed`: more output followed it. */
  releaseHeld(out: SseEvent[]): void {
    if (this.held === undefined) return;
    this.emitDone(this.held, 'completed', out);
    this.held = undefined;
  }

  /**
   * The finish: the done events of the last items (the sequencer ended every block before it; the last
   * one ended is the one a `length` finish cut), and the final Response.
   */
  finish(finishReason: FinishReason, usage: Usage, out: SseEvent[]): ResponseObject {
    const ending = mapFinishReason(finishReason);
    const cutStatus: ItemStatus = ending.status === 'completed' ? 'completed' : 'incomplete';
    if (this.held !== undefined) {
      this.emitDone(this.held, cutStatus, out);
      this.held = undefined;
    }
    if (this.open !== undefined) {
      this.emitDone(this.open, cutStatus, out);
      this.open = undefined;
    }
    return buildResponseObject(this.context, {
      status: ending.status,
      output: [...this.output],
      usage: encodeUsage(usage),
      error: ending.error,
      incompleteDetails: ending.incompleteDetails,
    });
  }

  /** The response as it stands when the stream fails: finished items, and announced ones as incomplete. */
  failedResponse(error: ServiceError): ResponseObject {
    const items = [...this.output];
    if (this.open !== undefined) items[this.open.outputIndex] = finishedItem(this.open, 'incomplete');
    if (this.held !== undefined) items[this.held.outputIndex] = finishedItem(this.held, 'completed');
    return buildResponseObject(this.context, { status: 'failed', output: items, usage: null, error: encodeResponseError(error) });
  }

  private emitDone(block: Block, status: ItemStatus, out: SseEvent[]): void {
    const item = finishedItem(block, status);
    const location = { item_id: block.itemId, output_index: block.outputIndex };
    if (item.type === 'message') {
      // The text goes out three times (these two and the item): serialised once for the first two.
      const at = `"item_id":${JSON.stringify(block.itemId)},"output_index":${block.outputIndex},"content_index":0`;
      const text = JSON.stringify(block.text);
      out.push(this.jsonEvent('response.output_text.done', `${at},"text":${text},"logprobs":[]`));
      out.push(this.jsonEvent('response.content_part.done', `${at},"part":{"type":"output_text","text":${text},"annotations":[]}`));
    } else if (item.type === 'reasoning' && block.redactedData === undefined) {
      out.push(this.event('response.reasoning_text.done', { ...location, content_index: 0, text: block.text }));
      out.push(
        this.event('response.content_part.done', { ...location, content_index: 0, part: { type: 'reasoning_text', text: block.text } }),
      );
    } else if (item.type === 'function_call') {
      out.push(this.event('response.function_call_arguments.done', { ...location, arguments: item.arguments }));
    }
    this.output[block.outputIndex] = item;
    out.push(this.event('response.output_item.done', { output_index: block.outputIndex, item }));
  }
}

/** The finished item of a block, as output_item.done and the final Response show it. */
function finishedItem(block: Block, status: ItemStatus): ResponseOutputItem {
  switch (block.kind) {
    case 'text':
      return messageItem(block.itemId, block.text, status);
    case 'reasoning':
      return reasoningItem(block.itemId, block.text, reasoningEncryptedContent(block), status);
    case 'tool':
      // Same rule as assembleResult: a call with no arguments is `{}`, so both paths agree.
      return functionCallItem(block.itemId, block.callId, block.toolName, block.text.trim() === '' ? '{}' : block.text, status);
  }
}
