/**
 * Encodes the canonical stream of parts as response-style server-sent events.
 *
 * Wire document: docs/wire-contracts.md "Responses" (Stream): every event is `event: <type>` plus
 * `data: {"type":"<type>", ..., "sequence_number":N}` with N increasing from 0 on EVERY event, no
 * `[DONE]`. Order: response.created, response.in_progress; then per output item
 * response.output_item.added, its content events, response.output_item.done; then response.completed
 * (or response.incomplete when the output was cut, or response.failed) carrying the full Response.
 *   - message: content_part.added, output_text.delta..., output_text.done, content_part.done;
 *   - function call: output_item.added with `arguments: ""`, function_call_arguments.delta...,
 *     function_call_arguments.done;
 *   - reasoning: content_part.added (reasoning_text), reasoning_text.delta..., reasoning_text.done,
 *     content_part.done (the OpenAI OpenAPI `ResponseReasoningText*Event`s).
 * The SDK's `responses.stream()` checks that response.created comes first, that every output_index is
 * announced by output_item.added, that `item_id` equals the item's id and that content_part.added
 * precedes its deltas; all hold by construction.
 *
 * Blocks arrive sequenced (core/sequence-blocks.ts: they never overlap), so each canonical block maps
 * to one output item announced when it starts: output_index order = start order = the non-streaming
 * `output` order (encode-response.ts).
 *
 * The `output_item.done` of the last item that ended is held until the next part arrives, so that an
 * item cut by max_output_tokens (the `finish` that follows says `length`) is reported `incomplete`
 * rather than `completed` (the same rule as encodeResponse).
 *
 * Events leave in one array per batch of parts (core/batched.ts); the events before an `onFinal` call
 * leave before it runs, as they did when each event was its own step.
 */
import { batched, batchesOf, type Batched } from '../../core/batched.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { newId } from '../../core/ids.ts';
import { isServiceError, serverError, type ServiceError } from '../../core/service-error.ts';
import type { SseEvent } from '../../core/sse-event.ts';
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

export interface ResponseStreamOptions {
  /**
   * Called with the final Response object (completed, incomplete or failed) BEFORE the terminal event is
   * sent, so that a client that reads `response.completed` and continues with `previous_response_id`
   * finds it stored. If it throws for a response that did not fail, an `error` event ends the stream
   * instead of the terminal event (the client asked for storage it did not get).
   */
  onFinal?: (response: ResponseObject) => Promise<void> | void;
}

type BlockKind = 'text' | 'reasoning' | 'tool';

interface Block {
  kind: BlockKind;
  /** `<kind>:<canonical id>`. */
  key: string;
  /** Output item id (`msg_`/`rs_`/`fc_` + 48 hex). */
  itemId: string;
  /** Position in `output`, given when the item is announced; -1 before. */
  outputIndex: number;
  /** Text, reasoning text or argument JSON received so far. */
  text: string;
  signature?: string;
  redactedData?: string;
  callId?: string;
  toolName?: string;
  /** The delta events' JSON up to the delta string, set when the block is announced (see deltaEvent). */
  deltaHead?: string;
  /** The delta events' JSON from after the delta string up to the sequence number. */
  deltaTail?: string;
}

/** The delta event of each kind of block. */
const DELTA_EVENT_TYPES: Readonly<Record<BlockKind, string>> = {
  text: 'response.output_text.delta',
  reasoning: 'response.reasoning_text.delta',
  tool: 'response.function_call_arguments.delta',
};

type EventFields = Record<string, unknown>;

/**
 * Transforms canonical parts into response events.
 *
 * Nothing is emitted until the first part that is neither `response-metadata` nor `error`: an error
 * before that point (an `error` part, an exception, or a source that ends empty) is THROWN, so that the
 * edge can still answer with an HTTP status. After response.created, failures become a final
 * response.failed (with `error` and the items so far); a source that ends without `finish` counts as
 * failed. Returning early (client gone) returns the source iterator, which aborts the upstream call.
 */
export function encodeResponseStream(
  parts: AsyncIterable<StreamPart>,
  context: ResponseContext,
  options: ResponseStreamOptions = {},
): Batched<SseEvent> {
  return batched(() => responseEvents(parts, context, options));
}

/** The events of each batch of parts, one array per batch (core/batched.ts). */
async function* responseEvents(
  parts: AsyncIterable<StreamPart>,
  context: ResponseContext,
  options: ResponseStreamOptions,
): AsyncGenerator<SseEvent[], void, undefined> {
  let sequenceNumber = 0;
  const event = (type: string, fields: EventFields): SseEvent => ({
    event: type,
    data: { type, ...fields, sequence_number: sequenceNumber++ },
  });
  /**
   * The same event, with its fields already JSON (`"name":value,...`, in the order `event` would write
   * them): for payloads that are sent more than once or are on the hot path, serialised once here.
   */
  const jsonEvent = (type: string, fieldsJson: string): SseEvent => ({
    event: type,
    data: `{"type":"${type}",${fieldsJson},"sequence_number":${sequenceNumber++}}`,
  });

  /** The open block (blocks never overlap). */
  let open: Block | undefined;
  /** The block whose output_item.done is held until the next part (see the header). */
  let heldClose: Block | undefined;
  /** Items in output_index order: finished ones, and the announced ones still open. */
  const output: ResponseOutputItem[] = [];
  let started = false;

  const announce = (block: Block, out: SseEvent[]): void => {
    block.outputIndex = output.length;
    const outputIndex = block.outputIndex;
    const itemId = block.itemId;
    const contentIndex = block.kind === 'tool' ? '' : ',"content_index":0';
    block.deltaHead = `{"type":"${DELTA_EVENT_TYPES[block.kind]}","item_id":${JSON.stringify(itemId)},"output_index":${outputIndex}${contentIndex},"delta":`;
    block.deltaTail = block.kind === 'text' ? ',"logprobs":[],"sequence_number":' : ',"sequence_number":';
    switch (block.kind) {
      case 'text': {
        const item = { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
        output.push(messageItem(itemId, '', 'in_progress'));
        out.push(event('response.output_item.added', { output_index: outputIndex, item }));
        out.push(
          event('response.content_part.added', {
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
        output.push({ ...item, content: [] });
        out.push(event('response.output_item.added', { output_index: outputIndex, item }));
        if (block.redactedData === undefined) {
          out.push(
            event('response.content_part.added', {
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
        const item = functionCallItem(itemId, block.callId ?? '', block.toolName ?? '', '', 'in_progress');
        output.push(functionCallItem(itemId, block.callId ?? '', block.toolName ?? '', '', 'in_progress'));
        out.push(event('response.output_item.added', { output_index: outputIndex, item }));
        break;
      }
    }
  };

  /**
   * One event per streamed delta: the hot path of a streamed response, so its JSON is the block's
   * constant head and tail around the delta's own JSON.stringify (~5x cheaper than stringifying an
   * object per delta). Fields in the order the other events use: type, item_id, output_index,
   * content_index (text and reasoning), delta, logprobs (text), sequence_number.
   */
  const deltaEvent = (block: Block, delta: string): SseEvent => ({
    event: DELTA_EVENT_TYPES[block.kind],
    data: `${block.deltaHead}${JSON.stringify(delta)}${block.deltaTail}${sequenceNumber++}}`,
  });

  /** The finished item of a block, as output_item.done and the final Response show it. */
  const finishedItem = (block: Block, status: ItemStatus): ResponseOutputItem => {
    switch (block.kind) {
      case 'text':
        return messageItem(block.itemId, block.text, status);
      case 'reasoning': {
        return reasoningItem(block.itemId, block.text, reasoningEncryptedContent(block), status);
      }
      case 'tool':
        // Same rule as assembleResult: a call with no arguments is `{}`, so both paths agree.
        return functionCallItem(
          block.itemId,
          block.callId ?? '',
          block.toolName ?? '',
          block.text.trim() === '' ? '{}' : block.text,
          status,
        );
    }
  };

  const emitDone = (block: Block, status: ItemStatus, out: SseEvent[]): void => {
    const item = finishedItem(block, status);
    const location = { item_id: block.itemId, output_index: block.outputIndex };
    if (item.type === 'message') {
      // The text goes out three times (these two and the item): serialised once for the first two.
      const at = `"item_id":${JSON.stringify(block.itemId)},"output_index":${block.outputIndex},"content_index":0`;
      const text = JSON.stringify(block.text);
      out.push(jsonEvent('response.output_text.done', `${at},"text":${text},"logprobs":[]`));
      out.push(jsonEvent('response.content_part.done', `${at},"part":{"type":"output_text","text":${text},"annotations":[]}`));
    } else if (item.type === 'reasoning' && block.redactedData === undefined) {
      out.push(event('response.reasoning_text.done', { ...location, content_index: 0, text: block.text }));
      out.push(event('response.content_part.done', { ...location, content_index: 0, part: { type: 'reasoning_text', text: block.text } }));
    } else if (item.type === 'function_call') {
      out.push(event('response.function_call_arguments.done', { ...location, arguments: item.arguments }));
    }
    output[block.outputIndex] = item;
    out.push(event('response.output_item.done', { output_index: block.outputIndex, item }));
  };

  /** Sends the held output_item.done, as `completed`: more output followed it. */
  const releaseHeldClose = (out: SseEvent[]): void => {
    if (heldClose === undefined) return;
    emitDone(heldClose, 'completed', out);
    heldClose = undefined;
  };

  const startBlock = (block: Block, out: SseEvent[]): void => {
    if (block.key === open?.key) return;
    open = block;
    announce(block, out);
  };

  const appendDelta = (key: string, delta: string, out: SseEvent[]): void => {
    if (open === undefined || key !== open.key || delta.length === 0) return;
    open.text += delta;
    out.push(deltaEvent(open, delta));
  };

  /** The open block ends; its output_item.done waits for the next part (it may be cut by the finish). */
  const endBlock = (key: string): void => {
    if (key !== open?.key) return;
    heldClose = open;
    open = undefined;
  };

  /** The response as it stands when the stream fails: finished items, and announced ones as incomplete. */
  const failedResponse = (error: ServiceError): ResponseObject => {
    const items = [...output];
    if (open !== undefined) items[open.outputIndex] = finishedItem(open, 'incomplete');
    if (heldClose !== undefined) items[heldClose.outputIndex] = finishedItem(heldClose, 'completed');
    return buildResponseObject(context, { status: 'failed', output: items, usage: null, error: encodeResponseError(error) });
  };

  /** Stores the failed response, then gives its response.failed. Callers send the events they hold first. */
  const failedEvent = async (error: ServiceError): Promise<SseEvent> => {
    const response = failedResponse(error);
    try {
      await options.onFinal?.(response);
    } catch {
      // The stream already failed; a failed store changes nothing the client can act on.
    }
    return event('response.failed', { response });
  };

  let out: SseEvent[] = [];
  // Set once the last event is handed over: nothing may follow it, not even an error raised by the
  // source's clean-up when the consumer ends the iteration (the batch is handed over emptied).
  let ended = false;
  try {
    for await (const batch of batchesOf(parts)) {
      for (const part of batch) {
        if (part.type === 'response-metadata') continue;
        if (part.type === 'error') {
          if (!started) throw part.error;
          // The events before the error leave before onFinal runs (see the header).
          if (out.length > 0) {
            yield out;
            out = [];
          }
          out.push(await failedEvent(part.error));
          ended = true;
          yield out.splice(0);
          return;
        }
        if (!started) {
          started = true;
          // The same Response twice: serialised once.
          const response = JSON.stringify(buildResponseObject(context, { status: 'in_progress', output: [], usage: null }));
          out.push(jsonEvent('response.created', `"response":${response}`));
          out.push(jsonEvent('response.in_progress', `"response":${response}`));
        }
        if (part.type === 'finish') {
          const ending = mapFinishReason(part.finishReason);
          const cutStatus: ItemStatus = ending.status === 'completed' ? 'completed' : 'incomplete';
          // The sequencer ended every block before the finish; the last one ended is the one cut.
          if (heldClose !== undefined) {
            emitDone(heldClose, cutStatus, out);
            heldClose = undefined;
          }
          if (open !== undefined) {
            emitDone(open, cutStatus, out);
            open = undefined;
          }
          const response = buildResponseObject(context, {
            status: ending.status,
            output: [...output],
            usage: encodeUsage(part.usage),
            error: ending.error,
            incompleteDetails: ending.incompleteDetails,
          });
          // Everything before the terminal event leaves before onFinal runs (see the header).
          if (out.length > 0) {
            yield out;
            out = [];
          }
          try {
            await options.onFinal?.(response);
          } catch (error) {
            const failure = isServiceError(error) ? error : serverError('internal_error', 'The response could not be stored.', error);
            out.push(event('error', { code: failure.code, message: failure.message, param: failure.param }));
            ended = true;
            yield out.splice(0);
            return;
          }
          const terminal =
            ending.status === 'completed'
              ? 'response.completed'
              : ending.status === 'incomplete'
                ? 'response.incomplete'
                : 'response.failed';
          out.push(event(terminal, { response }));
          ended = true;
          yield out.splice(0);
          return;
        }
        // A signature may follow the end of its reasoning block: it still belongs in that item's done event.
        if (part.type !== 'reasoning-signature') releaseHeldClose(out);
        switch (part.type) {
          case 'text-start':
            startBlock({ kind: 'text', key: `text:${part.id}`, itemId: newId.responseMessageItem(), outputIndex: -1, text: '' }, out);
            break;
          case 'text-delta':
            appendDelta(`text:${part.id}`, part.delta, out);
            break;
          case 'text-end':
            endBlock(`text:${part.id}`);
            break;
          case 'reasoning-start':
            startBlock(
              { kind: 'reasoning', key: `reasoning:${part.id}`, itemId: newId.responseReasoningItem(), outputIndex: -1, text: '' },
              out,
            );
            break;
          case 'reasoning-delta':
            appendDelta(`reasoning:${part.id}`, part.delta, out);
            break;
          case 'reasoning-signature': {
            // A signature may follow its block's end while that item's done event is still held.
            const key = `reasoning:${part.id}`;
            const block = open?.key === key ? open : heldClose?.key === key ? heldClose : undefined;
            if (block !== undefined) block.signature = (block.signature ?? '') + part.signature;
            break;
          }
          case 'reasoning-end':
            endBlock(`reasoning:${part.id}`);
            break;
          case 'reasoning-redacted':
            startBlock(
              {
                kind: 'reasoning',
                key: `redacted:${part.id}`,
                itemId: newId.responseReasoningItem(),
                outputIndex: -1,
                text: '',
                redactedData: part.data,
              },
              out,
            );
            endBlock(`redacted:${part.id}`);
            break;
          case 'tool-input-start':
            startBlock(
              {
                kind: 'tool',
                key: `tool:${part.id}`,
                itemId: newId.responseFunctionCallItem(),
                outputIndex: -1,
                text: '',
                callId: part.id,
                toolName: part.toolName,
              },
              out,
            );
            break;
          case 'tool-input-delta':
            appendDelta(`tool:${part.id}`, part.delta, out);
            break;
          case 'tool-input-end':
            endBlock(`tool:${part.id}`);
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
    if (!started) throw error;
    // Unknown errors get a generic message: their text may name upstream hosts or keys. Events of the
    // batch that were encoded before the failure still go out first, and before onFinal runs.
    const failure = isServiceError(error) ? error : serverError('internal_error', 'The generation failed while streaming.', error);
    if (out.length > 0) {
      yield out;
      out = [];
    }
    out.push(await failedEvent(failure));
    yield out;
    return;
  }
  const incomplete = serverError('internal_error', 'The generation stream ended before it was complete.');
  if (!started) throw incomplete;
  yield [await failedEvent(incomplete)];
}
