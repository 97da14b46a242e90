/**
 * A LanguageModel over any `/v1/chat/completions` upstream (OpenAI, vLLM, Ollama, llama.cpp server,
 * LM Studio). One POST per generation, always streamed: the SSE body is parsed once
 * (shared/sse-parser.ts), each event read leniently (openai-compatible-wire.ts; most text deltas
 * without a JSON parse, chunk-template.ts) and mapped to
 * canonical parts (map-openai-compatible-stream.ts); the parts of one upstream read leave as one batch
 * (core/batched.ts). An upstream that answers with a whole JSON body instead of a stream is accepted too.
 *
 * Errors: an HTTP error status, a transport failure, or a 200 that is no answer (a body that is empty
 * or not JSON, no choices, an `error` event, a stream cut before `[DONE]`/finish reason) before any
 * output is thrown (an UpstreamError, so the generation service may retry or fall back); once output
 * was produced, a fault ends the stream with an `error` part (shared/answer-faults.ts). Aborting `options.signal` aborts the upstream request and
 * closes its connection; the iteration then rejects with the signal's reason.
 */
import { batched, type Batched } from '../../core/batched.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import type { CallOptions, LanguageModel } from '../../core/language-model.ts';
import { isServiceError, type ServiceError } from '../../core/service-error.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { upstreamMalformedError } from '../../core/upstream-error.ts';
import { BodyDrain, headerValue, streamEndedEarlyError, type UpstreamHttpClient, type UpstreamResponse } from '../shared/http-client.ts';
import { FaultGate } from '../shared/answer-faults.ts';
import { asObject, parseJson } from '../shared/lenient-json.ts';
import { EventBatchReader } from '../shared/read-event-batches.ts';
import type { SseMessage } from '../shared/sse-parser.ts';
import {
  convertToOpenAICompatibleRequest,
  unsupportedSettings,
  type OpenAICompatibleRequestOptions,
} from './convert-to-openai-compatible-request.ts';
import { ChunkTemplate } from './chunk-template.ts';
import { OpenAICompatibleStreamMapper } from './map-openai-compatible-stream.ts';
import { openAICompatibleStatusError, openAICompatibleStreamError } from './openai-compatible-error.ts';
import { readChunk, readCompletion, readError } from './openai-compatible-wire.ts';
import type { Cancellation } from '../../core/cancellation.ts';

export interface OpenAICompatibleChatSettings extends OpenAICompatibleRequestOptions {
  /** Headers sent with every request (authorization and the provider's configured headers). */
  headers: Record<string, string>;
}

export class OpenAICompatibleChatLanguageModel implements LanguageModel {
  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly settings: OpenAICompatibleChatSettings,
  ) {}

  stream(request: GenerationRequest, options: CallOptions): Batched<StreamPart> {
    return batched(() => this.streamBatches(request, options));
  }

  /**
   * The answer's parts, one array per upstream read (core/batched.ts), through a FaultGate: a fault
   * before any output is thrown (shared/answer-faults.ts).
   */
  private async *streamBatches(request: GenerationRequest, options: CallOptions): AsyncGenerator<readonly StreamPart[], void, undefined> {
    const wholeResponse = options.preferWholeResponse === true;
    // A caller that assembles the whole answer gets it in one upstream JSON body (one parse, not one per chunk).
    const body = convertToOpenAICompatibleRequest(request, this.settings, !wholeResponse);
    const warnings = unsupportedSettings(request, this.settings);
    const gate = new FaultGate();
    if (warnings.length > 0) gate.pass([{ type: 'response-metadata', warnings }]);
    const headers: Record<string, string> = {
      accept: wholeResponse ? 'application/json' : 'text/event-stream',
      ...this.settings.headers,
    };
    if (options.requestId !== undefined) headers['x-request-id'] = options.requestId;
    const response = await this.client.postJson('/chat/completions', body, headers, options.signal, options.trace);
    if (response.status < 200 || response.status >= 300) {
      const text = await this.client.readErrorText(response);
      throw openAICompatibleStatusError(response.status, text, response.headers, (message) => this.client.sanitize(message));
    }
    try {
      if (readsAsWholeBody(headerValue(response.headers, 'content-type'), wholeResponse)) {
        const parts = gate.pass(await this.readWholeBody(response, options.signal));
        if (parts.length > 0) yield parts;
      } else {
        for await (const batch of this.readEventStream(response, options.signal)) {
          const parts = gate.pass(batch);
          if (parts.length > 0) yield parts;
        }
      }
    } finally {
      // Destroying an unfinished body closes the connection, which is how the upstream learns to stop.
      response.body.destroy();
    }
  }

  private async *readEventStream(response: UpstreamResponse, signal: Cancellation): AsyncGenerator<readonly StreamPart[], void, undefined> {
    const mapper = new OpenAICompatibleStreamMapper();
    const sanitize = (message: string): string => this.client.sanitize(message);
    let failure: ServiceError | undefined;
    let sawEvent = false;
    const drain = new BodyDrain(response);
    const template = new ChunkTemplate();
    const mapEvent = (event: SseMessage, parts: StreamPart[]): boolean => {
      sawEvent = true;
      const data = event.data;
      if (data === '[DONE]') {
        drain.start();
        return true;
      }
      if (isBlank(data)) return true; // an empty keep-alive event
      // Most chunks are the last one with another delta string: read those without parsing (chunk-template.ts).
      const templated = event.event === 'error' ? undefined : template.read(data);
      if (templated !== undefined) {
        mapper.mapInto(templated, parts);
        return true;
      }
      const json = parseJson(data);
      const chunk = readChunk(json);
      if (chunk === undefined) {
        failure = upstreamMalformedError('the stream carried an event that is not JSON');
        return false;
      }
      template.learn(data, chunk);
      // `{"error": ...}` data, or an SSE event named `error` (some proxies and servers send those).
      if (chunk.error !== undefined || event.event === 'error') {
        failure = openAICompatibleStreamError(
          chunk.error ?? readError(json) ?? { message: undefined, type: undefined, code: undefined, param: undefined },
          sanitize,
        );
        return false;
      }
      mapper.mapInto(chunk, parts);
      return true;
    };
    /** Parts of the read that carried `[DONE]`: they leave with `finish` (shared/read-event-batches.ts). */
    const last: StreamPart[] = [];
    const reader = new EventBatchReader(response.body, drain, mapEvent, last);
    try {
      for (let parts = await reader.next(); parts !== undefined; parts = await reader.next()) yield parts;
    } catch (error) {
      if (!drain.started) {
        const mapped = this.client.transportError(error, signal);
        if (signal.aborted || !isServiceError(mapped)) throw mapped;
        failure = mapped;
      }
    } finally {
      drain.stop();
      reader.close();
    }
    if (failure === undefined) failure = streamFault(sawEvent, drain.started, mapper);
    if (failure !== undefined) {
      last.push({ type: 'error', error: failure });
      yield last;
      return;
    }
    for (const part of mapper.finish()) last.push(part);
    yield last;
  }

  private async readWholeBody(response: UpstreamResponse, signal: Cancellation): Promise<StreamPart[]> {
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      const mapped = this.client.transportError(error, signal);
      if (signal.aborted || !isServiceError(mapped)) throw mapped;
      return [{ type: 'error', error: mapped }];
    }
    if (text.trim() === '') return [{ type: 'error', error: upstreamMalformedError('the response body is empty') }];
    const json = parseJson(text);
    if (json === undefined) return [{ type: 'error', error: upstreamMalformedError('the response body is not JSON') }];
    const errorView = readError(asObject(json)?.['error']);
    if (errorView !== undefined)
      return [{ type: 'error', error: openAICompatibleStreamError(errorView, (message) => this.client.sanitize(message)) }];
    const completion = readCompletion(json);
    if (completion === undefined) return [{ type: 'error', error: upstreamMalformedError('the JSON body has no choices') }];
    return new OpenAICompatibleStreamMapper().mapCompletion(completion);
  }
}

/** True for event data that is empty or only white space (a keep-alive); JSON data starts with `{` at once. */
function isBlank(data: string): boolean {
  return data.length === 0 || (data.charCodeAt(0) <= 32 && data.trim() === '');
}

/**
 * A JSON content type is one body; so is any other non-SSE body when the whole answer was asked for.
 * Everything else (SSE, or a streamed request answered without a content type) is read as events.
 */
function readsAsWholeBody(contentType: string | undefined, preferWhole: boolean): boolean {
  if (contentType?.includes('application/json') === true) return true;
  return preferWhole && contentType?.includes('text/event-stream') !== true;
}

/** What is wrong with an event stream that ended without an error event, or undefined when it is a complete answer. */
function streamFault(sawEvent: boolean, sawDone: boolean, mapper: OpenAICompatibleStreamMapper): ServiceError | undefined {
  if (!sawEvent) return upstreamMalformedError('the response stream is empty');
  if (!mapper.sawChoice) return upstreamMalformedError('the response stream carried no choices');
  // `[DONE]` or a finish reason marks a complete answer; a server may send either one without the other.
  if (!sawDone && !mapper.sawFinishReason) return streamEndedEarlyError();
  return undefined;
}
