/**
 * A LanguageModel over the Anthropic Messages API (`POST {baseUrl}/v1/messages`, streaming): the
 * request is converted (convert-to-anthropic-request.ts) and sent through the shared upstream-call
 * template (shared/stream-from-upstream.ts). This file is what that template reads with: the SSE
 * events, each read leniently (anthropic-wire.ts; most deltas without a JSON parse, delta-template.ts)
 * and mapped to canonical parts (map-anthropic-stream.ts). An upstream that answers with a whole JSON
 * message instead of a stream is accepted too.
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
import type { ServiceError } from '../../core/service-error.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { upstreamMalformedError } from '../../core/upstream-error.ts';
import { streamEndedEarlyError, type UpstreamHttpClient } from '../shared/http-client.ts';
import { asObject, parseJson } from '../shared/lenient-json.ts';
import { streamFromUpstream, type UpstreamAnswer, type UpstreamCall, type UpstreamCallSource } from '../shared/stream-from-upstream.ts';
import { anthropicStatusError, anthropicStreamError } from './anthropic-error.ts';
import { DeltaTemplate } from './delta-template.ts';
import { readError, readEvent, readMessage } from './anthropic-wire.ts';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.ts';
import type { ProviderLogger } from '../shared/provider-context.ts';
import { AnthropicStreamMapper } from './map-anthropic-stream.ts';

export interface AnthropicMessagesSettings {
  upstreamModel: string;
  /** `max_tokens` when a request sets none, tokens. */
  defaultMaxOutputTokens: number;
  /** x-api-key, anthropic-version and the provider's configured headers. */
  headers: Record<string, string>;
  /** Where requests that could not be sent as asked are reported. */
  logger?: ProviderLogger;
}

export class AnthropicMessagesLanguageModel implements LanguageModel, UpstreamCallSource {
  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly settings: AnthropicMessagesSettings,
  ) {}

  stream(request: GenerationRequest, options: CallOptions): Batched<StreamPart> {
    return batched(() => streamFromUpstream(this.client, this, request, options));
  }

  /** The request converted into its upstream call, with the reader of this call's answer. */
  upstreamCall(request: GenerationRequest, options: CallOptions): UpstreamCall {
    const { body, jsonToolName, warnings } = convertToAnthropicRequest(request, this.settings);
    // A caller that assembles the whole answer gets it as one JSON message (one parse, not one per event).
    const whole = options.preferWholeResponse === true;
    return {
      path: '/v1/messages',
      body: whole ? { ...body, stream: false } : body,
      headers: this.settings.headers,
      whole,
      warnings,
      statusError: anthropicStatusError,
      answer: new AnthropicAnswer(new AnthropicStreamMapper(jsonToolName), this.client.sanitizer),
    };
  }
}

/** One call's reading of an Anthropic answer: its SSE events, or one whole JSON message. */
class AnthropicAnswer implements UpstreamAnswer {
  failure: ServiceError | undefined;
  /** Most events are the last delta with another string: read those without parsing (delta-template.ts). */
  private readonly template = new DeltaTemplate();

  constructor(
    private readonly mapper: AnthropicStreamMapper,
    private readonly sanitize: (message: string) => string,
  ) {}

  get closed(): boolean {
    return this.mapper.sawMessageStop;
  }

  mapEvent(data: string, eventName: string | undefined, parts: StreamPart[]): boolean {
    const template = this.template;
    const value = eventName === 'error' ? undefined : template.readValue(data);
    if (value !== undefined) {
      this.mapper.mapDeltaValue(template.blockIndex, template.deltaKind, template.valueField, value, parts);
      return true;
    }
    if (data.trim() === '') return true; // an empty keep-alive event
    const json = parseJson(data);
    if (json === undefined) {
      this.failure = upstreamMalformedError('the stream carried an event that is not JSON');
      return false;
    }
    const event = readEvent(json);
    this.template.learn(data, event);
    // The data's `type`, or the SSE event name (a proxy may send `event: error` with other data).
    if (event.type === 'error' || eventName === 'error') {
      this.failure = anthropicStreamError(
        event.type === 'error' ? event.error : readError(asObject(json)?.['error'] ?? json),
        this.sanitize,
      );
      return false;
    }
    for (const part of this.mapper.map(event)) parts.push(part);
    return true;
  }

  finish(): ServiceError | undefined {
    return this.mapper.sawMessageStop ? undefined : streamEndedEarlyError();
  }

  mapWhole(json: unknown): StreamPart[] {
    const body = asObject(json);
    if (body?.['type'] === 'error') return [{ type: 'error', error: anthropicStreamError(readError(body['error']), this.sanitize) }];
    const message = readMessage(json);
    if (message === undefined) return [{ type: 'error', error: upstreamMalformedError('the JSON body is not a message with content') }];
    return this.mapper.mapMessage(message);
  }
}
