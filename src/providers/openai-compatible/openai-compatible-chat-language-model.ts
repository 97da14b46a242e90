/**
 * A LanguageModel over any `/v1/chat/completions` upstream (OpenAI, vLLM, Ollama, llama.cpp server,
 * LM Studio). One POST per generation, through the shared upstream-call template
 * (shared/stream-from-upstream.ts); this file converts the request and reads the answer: each SSE event
 * read leniently (openai-compatible-wire.ts; most text deltas without a JSON parse, chunk-template.ts)
 * and mapped to canonical parts (map-openai-compatible-stream.ts); the parts of one upstream read leave
 * as one batch (core/batched.ts). An upstream that answers with a whole JSON body instead of a stream
 * is accepted too.
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
import type { ServiceError } from '../../core/service-error.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { upstreamMalformedError } from '../../core/upstream-error.ts';
import { streamEndedEarlyError, type UpstreamHttpClient } from '../shared/http-client.ts';
import { asObject, parseJson } from '../shared/lenient-json.ts';
import { streamFromUpstream, type UpstreamAnswer, type UpstreamCall, type UpstreamCallSource } from '../shared/stream-from-upstream.ts';
import {
  convertToOpenAICompatibleRequest,
  unsupportedSettings,
  type OpenAICompatibleRequestOptions,
} from './convert-to-openai-compatible-request.ts';
import { ChunkTemplate } from './chunk-template.ts';
import { OpenAICompatibleStreamMapper } from './map-openai-compatible-stream.ts';
import { openAICompatibleStatusError, openAICompatibleStreamError } from './openai-compatible-error.ts';
import { readChunk, readCompletion, readError } from './openai-compatible-wire.ts';

export interface OpenAICompatibleChatSettings extends OpenAICompatibleRequestOptions {
  /** Headers sent with every request (authorization and the provider's configured headers). */
  headers: Record<string, string>;
}

export class OpenAICompatibleChatLanguageModel implements LanguageModel, UpstreamCallSource {
  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly settings: OpenAICompatibleChatSettings,
  ) {}

  stream(request: GenerationRequest, options: CallOptions): Batched<StreamPart> {
    return batched(() => streamFromUpstream(this.client, this, request, options));
  }

  /** The request converted into its upstream call, with the reader of this call's answer. */
  upstreamCall(request: GenerationRequest, options: CallOptions): UpstreamCall {
    const whole = options.preferWholeResponse === true;
    // A caller that assembles the whole answer gets it in one upstream JSON body (one parse, not one per chunk).
    const body = convertToOpenAICompatibleRequest(request, this.settings, !whole);
    return {
      path: '/chat/completions',
      body,
      headers: this.settings.headers,
      whole,
      warnings: unsupportedSettings(request, this.settings),
      statusError: openAICompatibleStatusError,
      answer: new OpenAICompatibleAnswer(this.client.sanitizer),
    };
  }
}

/** One call's reading of a chat completion: its SSE chunks, or one whole JSON completion. */
class OpenAICompatibleAnswer implements UpstreamAnswer {
  failure: ServiceError | undefined;
  /** True once `[DONE]` came. */
  closed = false;
  private readonly mapper = new OpenAICompatibleStreamMapper();
  /** Most chunks are the last one with another delta string: read those without parsing (chunk-template.ts). */
  private readonly template = new ChunkTemplate();

  constructor(private readonly sanitize: (message: string) => string) {}

  mapEvent(data: string, eventName: string | undefined, parts: StreamPart[]): boolean {
    if (data === '[DONE]') {
      this.closed = true;
      return true;
    }
    if (isBlank(data)) return true; // an empty keep-alive event
    const template = this.template;
    const delta = eventName === 'error' ? undefined : template.readDelta(data);
    if (delta !== undefined) {
      this.mapper.mapDelta(template.kind, delta, template.chunkId, template.chunkModel, parts);
      return true;
    }
    const json = parseJson(data);
    const chunk = readChunk(json);
    if (chunk === undefined) {
      this.failure = upstreamMalformedError('the stream carried an event that is not JSON');
      return false;
    }
    this.template.learn(data, chunk);
    // `{"error": ...}` data, or an SSE event named `error` (some proxies and servers send those).
    if (chunk.error !== undefined || eventName === 'error') {
      this.failure = openAICompatibleStreamError(
        chunk.error ?? readError(json) ?? { message: undefined, type: undefined, code: undefined, param: undefined },
        this.sanitize,
      );
      return false;
    }
    this.mapper.mapInto(chunk, parts);
    return true;
  }

  /** What is wrong with an event stream that ended without an error event; else its closing parts. */
  finish(parts: StreamPart[]): ServiceError | undefined {
    if (!this.mapper.sawChoice) return upstreamMalformedError('the response stream carried no choices');
    // `[DONE]` or a finish reason marks a complete answer; a server may send either one without the other.
    if (!this.closed && !this.mapper.sawFinishReason) return streamEndedEarlyError();
    for (const part of this.mapper.finish()) parts.push(part);
    return undefined;
  }

  mapWhole(json: unknown): StreamPart[] {
    const errorView = readError(asObject(json)?.['error']);
    if (errorView !== undefined) return [{ type: 'error', error: openAICompatibleStreamError(errorView, this.sanitize) }];
    const completion = readCompletion(json);
    if (completion === undefined) return [{ type: 'error', error: upstreamMalformedError('the JSON body has no choices') }];
    return this.mapper.mapCompletion(completion);
  }
}

/** True for event data that is empty or only white space (a keep-alive); JSON data starts with `{` at once. */
function isBlank(data: string): boolean {
  return data.length === 0 || (data.charCodeAt(0) <= 32 && data.trim() === '');
}
