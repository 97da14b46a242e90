/**
 * A LanguageModel over any `/v1/chat/completions` upstream (OpenAI, vLLM, Ollama, llama.cpp server,
 * LM Studio). One POST per generation, always streamed: the SSE body is parsed once
 * (shared/sse-parser.ts), each event read leniently (openai-compatible-wire.ts) and mapped to
 * canonical parts (map-openai-compatible-stream.ts). An upstream that answers with a whole JSON body
 * instead of a stream is accepted too.
 *
 * Errors: an HTTP error status or a transport failure before the body is thrown (an UpstreamError, so
 * the generation service may retry or fall back); anything that fails once the body is being read
 * ends the stream with an `error` part. Aborting `options.signal` aborts the upstream request and
 * closes its connection; the iteration then rejects with the signal's reason.
 */
import type { GenerationRequest } from '../../core/generation.ts';
import type { CallOptions, LanguageModel } from '../../core/language-model.ts';
import { isServiceError, type ServiceError } from '../../core/service-error.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { BodyDrain, headerValue, streamEndedEarlyError, type UpstreamHttpClient, type UpstreamResponse } from '../shared/http-client.ts';
import { parseJson } from '../shared/lenient-json.ts';
import { parseSseStream } from '../shared/sse-parser.ts';
import { convertToOpenAICompatibleRequest, unsupportedSettings, type OpenAICompatibleRequestOptions } from './convert-to-openai-compatible-request.ts';
import { OpenAICompatibleStreamMapper } from './map-openai-compatible-stream.ts';
import { openAICompatibleStatusError, openAICompatibleStreamError } from './openai-compatible-error.ts';
import { readChunk, readCompletion } from './openai-compatible-wire.ts';

export interface OpenAICompatibleChatSettings extends OpenAICompatibleRequestOptions {
  /** Headers sent with every request (authorization and the provider's configured headers). */
  headers: Record<string, string>;
}

export class OpenAICompatibleChatLanguageModel implements LanguageModel {
  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly settings: OpenAICompatibleChatSettings,
  ) {}

  async *stream(request: GenerationRequest, options: CallOptions): AsyncGenerator<StreamPart, void, undefined> {
    const streamed = convertToOpenAICompatibleRequest(request, this.settings);
    const warnings = unsupportedSettings(request, this.settings);
    if (warnings.length > 0) yield { type: 'response-metadata', warnings };
    // A caller that assembles the whole answer gets it in one upstream JSON body (one parse, not one per chunk).
    const body = options.preferWholeResponse === true ? { ...streamed, stream: false, stream_options: undefined } : streamed;
    const headers: Record<string, string> = { accept: options.preferWholeResponse === true ? 'application/json' : 'text/event-stream', ...this.settings.headers };
    if (options.requestId !== undefined) headers['x-request-id'] = options.requestId;
    const response = await this.client.postJson('/chat/completions', body, headers, options.signal);
    if (response.status < 200 || response.status >= 300) {
      const text = await this.client.readErrorText(response);
      throw openAICompatibleStatusError(response.status, text, response.headers, (message) => this.client.sanitize(message));
    }
    try {
      if (headerValue(response.headers, 'content-type')?.includes('application/json')) {
        yield* await this.readWholeBody(response, options.signal);
      } else {
        yield* this.readEventStream(response, options.signal);
      }
    } finally {
      // Destroying an unfinished body closes the connection, which is how the upstream learns to stop.
      if (!response.body.destroyed) response.body.destroy();
    }
  }

  private async *readEventStream(response: UpstreamResponse, signal: AbortSignal): AsyncGenerator<StreamPart, void, undefined> {
    const mapper = new OpenAICompatibleStreamMapper();
    const sanitize = (message: string): string => this.client.sanitize(message);
    let failure: ServiceError | undefined;
    const drain = new BodyDrain(response);
    try {
      for await (const event of parseSseStream(response.body)) {
        if (drain.started) continue;
        if (event.data === '[DONE]') {
          drain.start();
          continue;
        }
        const chunk = readChunk(parseJson(event.data));
        if (chunk === undefined) continue; // not JSON: nothing a client could use
        if (chunk.error !== undefined) {
          failure = openAICompatibleStreamError(chunk.error, sanitize);
          break;
        }
        yield* mapper.map(chunk);
      }
    } catch (error) {
      if (!drain.started) {
        const mapped = this.client.transportError(error, signal);
        if (signal.aborted || !isServiceError(mapped)) throw mapped;
        failure = mapped;
      }
    } finally {
      drain.stop();
    }
    if (failure === undefined && !drain.started && !mapper.sawFinishReason) failure = streamEndedEarlyError();
    if (failure !== undefined) {
      yield { type: 'error', error: failure };
      return;
    }
    yield* mapper.finish();
  }

  private async readWholeBody(response: UpstreamResponse, signal: AbortSignal): Promise<StreamPart[]> {
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      const mapped = this.client.transportError(error, signal);
      if (signal.aborted || !isServiceError(mapped)) throw mapped;
      return [{ type: 'error', error: mapped }];
    }
    const json = parseJson(text);
    const completion = readCompletion(json);
    if (completion === undefined) return [{ type: 'error', error: streamEndedEarlyError() }];
    return new OpenAICompatibleStreamMapper().mapCompletion(completion);
  }
}
