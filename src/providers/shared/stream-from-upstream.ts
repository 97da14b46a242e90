/**
 * The upstream-call template of every streaming chat provider (after vercel/ai provider-utils
 * `postJsonToApi` with `createEventSourceResponseHandler`/`createJsonResponseHandler`): post
 * (post-to-upstream.ts: `x-request-id`, status check), read the body as one JSON answer or as server-sent
 * events, gate faults (answer-faults.ts), report an empty stream or one that ended before its closing
 * event, and release the body. A provider supplies only what is its own: the request, its status-error
 * mapper, and an `UpstreamAnswer` that maps its events and its whole JSON answer to canonical parts.
 *
 * Hot path: one generator per call, the events of each upstream read mapped in one synchronous loop
 * (read-event-batches.ts), no await or allocation per event beyond the provider's own mapping.
 */
import type { GenerationRequest, GenerationWarning } from '../../core/generation.ts';
import type { CallOptions } from '../../core/language-model.ts';
import { isServiceError, type ServiceError } from '../../core/service-error.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { upstreamMalformedError } from '../../core/upstream-error.ts';
import { FaultGate } from './answer-faults.ts';
import { BodyDrain, headerValue, type UpstreamHttpClient, type UpstreamResponse } from './http-client.ts';
import { parseJson } from './lenient-json.ts';
import { postToUpstream, type UpstreamStatusError } from './post-to-upstream.ts';
import { EventBatchReader, type UpstreamEvents } from './read-event-batches.ts';

/** One call's reading of the upstream answer: a provider's mapper of events and of whole JSON bodies. */
export interface UpstreamAnswer extends UpstreamEvents {
  /**
   * The event stream ended without a fault event: the fault of an incomplete answer (no choices, no
   * closing event), or undefined after appending the answer's closing parts to `parts`.
   */
  finish(parts: StreamPart[]): ServiceError | undefined;
  /** A whole JSON body (not empty, valid JSON) -> parts; an error body or no answer is an `error` part. */
  mapWhole(json: unknown): StreamPart[];
}

/** What a chat model's `stream` hands the template: its converted request and how to read the answer. */
export interface UpstreamCall {
  path: string;
  body: unknown;
  /** The provider's headers (key, version, configured); `accept` and `x-request-id` are added. */
  headers: Record<string, string>;
  /** Ask for (and prefer to read) one JSON answer rather than events: `CallOptions.preferWholeResponse`. */
  whole: boolean;
  /** Settings that could not be honoured: sent first as `response-metadata` when any. */
  warnings: GenerationWarning[];
  statusError: UpstreamStatusError;
  answer: UpstreamAnswer;
}

/** A chat model over the template: converts a request into its call (on the stream's first read). */
export interface UpstreamCallSource {
  upstreamCall(request: GenerationRequest, options: CallOptions): UpstreamCall;
}

/**
 * The answer's parts, one array per upstream read (core/batched.ts), through a FaultGate: a fault
 * before any output is thrown (an UpstreamError, so the generation service may retry or fall back);
 * after output it is the stream's last, `error`, part. The request is converted inside the generator,
 * so a request that cannot be sent fails on the first read, like every other fault. Aborting
 * `options.signal` aborts the request and closes its connection; the iteration then rejects with the
 * signal's reason.
 */
export async function* streamFromUpstream(
  client: UpstreamHttpClient,
  model: UpstreamCallSource,
  request: GenerationRequest,
  options: CallOptions,
): AsyncGenerator<readonly StreamPart[], void, undefined> {
  const call = model.upstreamCall(request, options);
  const gate = new FaultGate();
  // Reported to the client by the edge (one header, one log line), like every backend's warnings.
  if (call.warnings.length > 0) gate.pass([{ type: 'response-metadata', warnings: call.warnings }]);
  const accept = call.whole ? 'application/json' : 'text/event-stream';
  const response = await postToUpstream(client, call.path, call.body, accept, call.headers, options, call.statusError);
  try {
    if (readsAsWholeBody(headerValue(response.headers, 'content-type'), call.whole)) {
      const parts = gate.pass(await readWholeBody(client, response, call.answer, options));
      if (parts.length > 0) yield parts;
    } else {
      for await (const batch of readEventStream(client, response, call.answer, options)) {
        const parts = gate.pass(batch);
        if (parts.length > 0) yield parts;
      }
    }
  } finally {
    // Destroying an unfinished body closes the connection, which is how the upstream learns to stop.
    response.body.destroy();
  }
}

/**
 * A JSON content type is one body; so is any other non-SSE body when the whole answer was asked for.
 * Everything else (SSE, or a streamed request answered without a content type) is read as events.
 */
function readsAsWholeBody(contentType: string | undefined, preferWhole: boolean): boolean {
  if (contentType?.includes('application/json') === true) return true;
  return preferWhole && contentType?.includes('text/event-stream') !== true;
}

async function* readEventStream(
  client: UpstreamHttpClient,
  response: UpstreamResponse,
  answer: UpstreamAnswer,
  options: CallOptions,
): AsyncGenerator<readonly StreamPart[], void, undefined> {
  const drain = new BodyDrain(response);
  /** Parts of the read that carried the closing event: they leave once the body has ended (read-event-batches.ts). */
  const last: StreamPart[] = [];
  const reader = new EventBatchReader(response.body, drain, answer, last);
  let failure: ServiceError | undefined;
  try {
    for (let parts = await reader.next(); parts !== undefined; parts = await reader.next()) yield parts;
  } catch (error) {
    if (!drain.started) {
      const mapped = client.transportError(error, options.signal);
      if (options.signal.aborted || !isServiceError(mapped)) throw mapped;
      failure = mapped;
    }
  } finally {
    drain.stop();
    reader.close();
  }
  failure ??= answer.failure;
  if (failure === undefined && !reader.sawEvent) failure = upstreamMalformedError('the response stream is empty');
  if (failure === undefined) failure = answer.finish(last);
  if (failure !== undefined) last.push({ type: 'error', error: failure });
  if (last.length > 0) yield last;
}

async function readWholeBody(
  client: UpstreamHttpClient,
  response: UpstreamResponse,
  answer: UpstreamAnswer,
  options: CallOptions,
): Promise<StreamPart[]> {
  let text: string;
  try {
    text = await response.body.text();
  } catch (error) {
    const mapped = client.transportError(error, options.signal);
    if (options.signal.aborted || !isServiceError(mapped)) throw mapped;
    return [{ type: 'error', error: mapped }];
  }
  if (text.trim() === '') return [{ type: 'error', error: upstreamMalformedError('the response body is empty') }];
  const json = parseJson(text);
  if (json === undefined) return [{ type: 'error', error: upstreamMalformedError('the response body is not JSON') }];
  return answer.mapWhole(json);
}
