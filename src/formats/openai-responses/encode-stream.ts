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
import { endedEarly, failureAfterStart, streamFailure } from '../shared/stream-failure.ts';
import type { ResponseContext } from './encode-response.ts';
import { Block, OutputItems } from './stream-output-items.ts';
import type { ResponseObject, ResponseStatus } from './wire-types.ts';

export interface ResponseStreamOptions {
  /**
   * Called with the final Response object (completed, incomplete or failed) BEFORE the terminal event is
   * sent, so that a client that reads `response.completed` and continues with `previous_response_id`
   * finds it stored. If it throws for a response that did not fail, an `error` event ends the stream
   * instead of the terminal event (the client asked for storage it did not get).
   */
  onFinal?: (response: ResponseObject) => Promise<void> | void;
}

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
  const items = new OutputItems(context);
  let out: SseEvent[] = [];
  // Set once the last event is handed over: nothing may follow it, not even an error raised by the
  // source's clean-up when the consumer ends the iteration (the batch is handed over emptied).
  let ended = false;
  try {
    for await (const batch of batchesOf(parts)) {
      for (const part of batch) {
        if (part.type === 'response-metadata') continue;
        if (part.type === 'error') {
          failureAfterStart(part.error, items.started);
          // The events before the error leave before onFinal runs (see the header).
          if (out.length > 0) {
            yield out;
            out = [];
          }
          out.push(await failedEvent(items, part.error, options));
          ended = true;
          yield out.splice(0);
          return;
        }
        if (!items.started) items.start(out);
        if (part.type !== 'finish') {
          mapPart(items, part, out);
          continue;
        }
        const response = items.finish(part.finishReason, part.usage, out);
        // Everything before the terminal event leaves before onFinal runs (see the header).
        if (out.length > 0) {
          yield out;
          out = [];
        }
        try {
          await options.onFinal?.(response);
        } catch (error) {
          const failure = isServiceError(error) ? error : serverError('internal_error', 'The response could not be stored.', error);
          out.push(items.event('error', { code: failure.code, message: failure.message, param: failure.param }));
          ended = true;
          yield out.splice(0);
          return;
        }
        out.push(items.event(TERMINAL_EVENTS[response.status], { response }));
        ended = true;
        yield out.splice(0);
        return;
      }
      if (out.length > 0) {
        yield out;
        out = [];
      }
    }
  } catch (error) {
    if (ended) return;
    const failure = streamFailure(failureAfterStart(error, items.started));
    // Events of the batch that were encoded before the failure still go out first, and before onFinal runs.
    if (out.length > 0) {
      yield out;
      out = [];
    }
    out.push(await failedEvent(items, failure, options));
    yield out;
    return;
  }
  yield [await failedEvent(items, endedEarly(items.started), options)];
}

/** One canonical part (not metadata, error or finish) -> the events it gives, appended to `out`. */
function mapPart(items: OutputItems, part: StreamPart, out: SseEvent[]): void {
  // A signature may follow the end of its reasoning block: it still belongs in that item's done event.
  if (part.type !== 'reasoning-signature') items.releaseHeld(out);
  switch (part.type) {
    case 'text-start':
      items.announce(new Block('text', 'text', part.id, newId.responseMessageItem()), out);
      break;
    case 'text-delta':
      items.append('text', part.id, part.delta, out);
      break;
    case 'text-end':
      items.end('text', part.id);
      break;
    case 'reasoning-start':
      items.announce(new Block('reasoning', 'reasoning', part.id, newId.responseReasoningItem()), out);
      break;
    case 'reasoning-delta':
      items.append('reasoning', part.id, part.delta, out);
      break;
    case 'reasoning-signature':
      items.sign(part.id, part.signature);
      break;
    case 'reasoning-end':
      items.end('reasoning', part.id);
      break;
    case 'reasoning-redacted': {
      const block = new Block('reasoning', 'redacted', part.id, newId.responseReasoningItem());
      block.redactedData = part.data;
      items.announce(block, out);
      items.end('redacted', part.id);
      break;
    }
    case 'tool-input-start': {
      const block = new Block('tool', 'tool', part.id, newId.responseFunctionCallItem());
      block.callId = part.id;
      block.toolName = part.toolName;
      items.announce(block, out);
      break;
    }
    case 'tool-input-delta':
      items.append('tool', part.id, part.delta, out);
      break;
    case 'tool-input-end':
      items.end('tool', part.id);
      break;
  }
}

/** Stores the failed response, then gives its response.failed. Callers send the events they hold first. */
async function failedEvent(items: OutputItems, error: ServiceError, options: ResponseStreamOptions): Promise<SseEvent> {
  const response = items.failedResponse(error);
  try {
    await options.onFinal?.(response);
  } catch {
    // The stream already failed; a failed store changes nothing the client can act on.
  }
  return items.event('response.failed', { response });
}

/** The terminal event of each final status. */
const TERMINAL_EVENTS: Readonly<Record<ResponseStatus, string>> = {
  completed: 'response.completed',
  incomplete: 'response.incomplete',
  failed: 'response.failed',
  in_progress: 'response.failed',
  cancelled: 'response.failed',
  queued: 'response.failed',
};
