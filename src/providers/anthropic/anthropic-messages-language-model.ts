/**
 * A LanguageModel over the Anthropic Messages API (`POST {baseUrl}/v1/messages`, streaming). The SSE
 * body is parsed once (shared/sse-parser.ts), each event read leniently (anthropic-wire.ts; most deltas
 * without a JSON parse, delta-template.ts) and mapped to canonical parts (map-anthropic-stream.ts). An upstream that answers with a whole JSON message
 * instead of a stream is accepted too.
 *
 * Errors: an HTTP error status, a transport failure, or a 200 that is no answer (a body that is empty
 * or not JSON, a message without content, an `error` event, a stream cut before `message_stop`)
 * before any output is thrown (an UpstreamError, so the generation service may retry or fall back);
 * once output was produced, a fault ends the stream with an `error` part (shared/answer-faults.ts). Aborting `options.signal` aborts
 * the upstream request and closes its connection; the iteration then rejects with the signal's reason.
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
import { anthropicStatusError, anthropicStreamError } from './anthropic-error.ts';
import { DeltaTemplate } from './delta-template.ts';
import { readError, readEvent, readMessage } from './anthropic-wire.ts';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.ts';
import type { ProviderLogger } from '../shared/provider-context.ts';
import { AnthropicStreamMapper } from './map-anthropic-stream.ts';
import type { Cancellation } from '../../core/cancellation.ts';

export interface AnthropicMessagesSettings {
  upstreamModel: string;
  /** `max_tokens` when a request sets none, tokens. */
  defaultMaxOutputTokens: number;
  /** x-api-key, anthropic-version and the provider's configured headers. */
  headers: Record<string, string>;
  /** Where requests that could not be sent as asked are reported. */
  logger?: ProviderLogger;
}

export class AnthropicMessagesLanguageModel implements LanguageModel {
  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly settings: AnthropicMessagesSettings,
  ) {}

  stream(request: GenerationRequest, options: CallOptions): Batched<StreamPart> {
    return batched(() => this.streamBatches(request, options));
  }

  /**
   * The answer's parts, one array per upstream read (core/batched.ts), through a FaultGate: a fault
   * before any output is thrown (shared/answer-faults.ts).
   */
  private async *streamBatches(request: GenerationRequest, options: CallOptions): AsyncGenerator<readonly StreamPart[], void, undefined> {
    const { body, jsonToolName, warnings } = convertToAnthropicRequest(request, this.settings);
    // Reported to the client by the edge (one header, one log line), like every backend's warnings.
    const gate = new FaultGate();
    if (warnings.length > 0) gate.pass([{ type: 'response-metadata', warnings }]);
    // A caller that assembles the whole answer gets it as one JSON message (one parse, not one per event).
    const whole = options.preferWholeResponse === true;
    const headers: Record<string, string> = { accept: whole ? 'application/json' : 'text/event-stream', ...this.settings.headers };
    const response = await this.client.postJson(
      '/v1/messages',
      whole ? { ...body, stream: false } : body,
      headers,
      options.signal,
      options.trace,
    );
    if (response.status < 200 || response.status >= 300) {
      const text = await this.client.readErrorText(response);
      throw anthropicStatusError(response.status, text, response.headers, (message) => this.client.sanitize(message));
    }
    const mapper = new AnthropicStreamMapper(jsonToolName);
    try {
      const contentType = headerValue(response.headers, 'content-type');
      // JSON is one message; so is any non-SSE body when the whole answer was asked for.
      if (contentType?.includes('application/json') === true || (whole && contentType?.includes('text/event-stream') !== true)) {
        const parts = gate.pass(await this.readWholeBody(response, mapper, options.signal));
        if (parts.length > 0) yield parts;
      } else {
        for await (const batch of this.readEventStream(response, mapper, options.signal)) {
          const parts = gate.pass(batch);
          if (parts.length > 0) yield parts;
        }
      }
    } finally {
      // Destroying an unfinished body closes the connection, which is how the upstream learns to stop.
      response.body.destroy();
    }
  }

  private async *readEventStream(
    response: UpstreamResponse,
    mapper: AnthropicStreamMapper,
    signal: Cancellation,
  ): AsyncGenerator<StreamPart[], void, undefined> {
    const sanitize = (message: string): string => this.client.sanitize(message);
    let failure: ServiceError | undefined;
    const drain = new BodyDrain(response);
    /** Parts of the read that carried message_stop: they leave once the body has ended (shared/read-event-batches.ts). */
    const last: StreamPart[] = [];
    let sawEvent = false;
    const template = new DeltaTemplate();
    const mapEvent = (message: SseMessage, parts: StreamPart[]): boolean => {
      sawEvent = true;
      // Most events are the last delta with another string: read those without parsing (delta-template.ts).
      const templated = message.event === 'error' ? undefined : template.read(message.data);
      if (templated !== undefined) {
        for (const part of mapper.map(templated)) parts.push(part);
        return true;
      }
      if (message.data.trim() === '') return true; // an empty keep-alive event
      const json = parseJson(message.data);
      if (json === undefined) {
        failure = upstreamMalformedError('the stream carried an event that is not JSON');
        return false;
      }
      const event = readEvent(json);
      template.learn(message.data, event);
      // The data's `type`, or the SSE event name (a proxy may send `event: error` with other data).
      if (event.type === 'error' || message.event === 'error') {
        failure = anthropicStreamError(event.type === 'error' ? event.error : readError(asObject(json)?.['error'] ?? json), sanitize);
        return false;
      }
      for (const part of mapper.map(event)) parts.push(part);
      if (mapper.sawMessageStop) drain.start();
      return true;
    };
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
    if (failure === undefined && !sawEvent) failure = upstreamMalformedError('the response stream is empty');
    if (failure === undefined && !mapper.sawMessageStop) failure = streamEndedEarlyError();
    if (failure !== undefined) last.push({ type: 'error', error: failure });
    if (last.length > 0) yield last;
  }

  private async readWholeBody(response: UpstreamResponse, mapper: AnthropicStreamMapper, signal: Cancellation): Promise<StreamPart[]> {
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
    const body = asObject(json);
    if (body?.['type'] === 'error')
      return [{ type: 'error', error: anthropicStreamError(readError(body['error']), (text) => this.client.sanitize(text)) }];
    const message = readMessage(json);
    if (message === undefined) return [{ type: 'error', error: upstreamMalformedError('the JSON body is not a message with content') }];
    return mapper.mapMessage(message);
  }
}
