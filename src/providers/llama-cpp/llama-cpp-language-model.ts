/**
 * A LanguageModel over a local GGUF file run in-process by node-llama-cpp. One generation:
 *
 * 1. convert the request (400s for what this backend cannot do come before any work);
 * 2. load the model (once per file, shared) and compile the JSON grammar the response format asks for;
 * 3. wait for a free context sequence (bounded concurrency, see llama-cpp-sequence-pool.ts);
 * 4. render the prompt with the GGUF's chat template and count it with the model's own tokenizer;
 * 5. generate with `LlamaChat.generateResponse`, whose chunks are streamed through a small queue as
 *    canonical parts while llama.cpp computes the next tokens on its own threads. Tools are offered as
 *    node-llama-cpp functions (convert-to-llama-cpp-functions.ts); a call ends the turn with
 *    `tool-calls`, its arguments streamed as tool-input parts.
 *
 * Aborting `options.signal` stops generation at the next token (node-llama-cpp `stopOnAbortSignal`),
 * frees the sequence and makes the iteration reject with the signal's reason, as the HTTP providers
 * do. A consumer that stops iterating early stops generation the same way.
 *
 * Usage is exact (`estimated: false`): input tokens are the rendered prompt's tokens, of which
 * `cachedInputTokens` were already in the sequence's KV cache from its previous request; output tokens
 * are the tokens llama.cpp sampled (stop-sequence tokens held back from the text included).
 */
import type {
  ChatHistoryItem,
  ChatModelFunctions,
  LLamaChatGenerateResponseOptions,
  LlamaChat,
  LlamaChatResponse,
  LlamaChatResponseChunk,
  LlamaChatResponseFunctionCallParamsChunk,
  LlamaGrammar,
} from 'node-llama-cpp';
import type { GenerationRequest } from '../../core/generation.ts';
import type { CallOptions, LanguageModel, LanguageModelSettings } from '../../core/language-model.ts';
import { isServiceError } from '../../core/service-error.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import type { Usage } from '../../core/usage.ts';
import type { ProviderLogger } from '../shared/provider-context.ts';
import { convertToLlamaCppChatHistory } from './convert-to-llama-cpp-chat-history.ts';
import { convertToLlamaCppFunctions } from './convert-to-llama-cpp-functions.ts';
import { convertToLlamaCppSamplingOptions, resolveMaxOutputTokens } from './convert-to-llama-cpp-generation-options.ts';
import { convertToLlamaCppJsonSchema, SchemaConversionError } from './convert-to-llama-cpp-json-schema.ts';
import { contextOverflowError, generationError, modelLoadError, unsupportedSchemaError } from './llama-cpp-error.ts';
import { loadNodeLlamaCpp } from './llama-cpp-native.ts';
import type { LlamaCppRuntime, LoadedLlamaCppModel } from './llama-cpp-runtime.ts';
import { mapLlamaCppFinishReason, matchedStopSequence } from './map-llama-cpp-finish-reason.ts';
import { LlamaCppChunkMapper } from './map-llama-cpp-response-chunk.ts';

/**
 * Hands chunks from node-llama-cpp's callback to the async generator. Unbounded: a chunk is a few
 * characters and generation is far slower than any consumer that is still reading.
 */
type ChannelChunk = LlamaChatResponseChunk | LlamaChatResponseFunctionCallParamsChunk;

class ChunkChannel {
  private readonly chunks: ChannelChunk[] = [];
  private wake: (() => void) | undefined;
  private ended = false;

  push(chunk: ChannelChunk): void {
    this.chunks.push(chunk);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  async *drain(): AsyncGenerator<ChannelChunk, void, undefined> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk !== undefined) {
        yield chunk;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

type GenerationOutcome = { ok: true; response: LlamaChatResponse<ChatModelFunctions> } | { ok: false; error: unknown };

export class LlamaCppLanguageModel implements LanguageModel {
  constructor(
    private readonly runtime: LlamaCppRuntime,
    /** Filesystem path of the GGUF file (the model config's `upstreamModel`); logged, never sent to clients. */
    private readonly modelPath: string,
    private readonly settings: LanguageModelSettings = {},
    private readonly logger?: ProviderLogger,
  ) {}

  async *stream(request: GenerationRequest, options: CallOptions): AsyncGenerator<StreamPart, void, undefined> {
    const history = convertToLlamaCppChatHistory(request);
    const sampling = convertToLlamaCppSamplingOptions(request);
    const offered = convertToLlamaCppFunctions(request);
    if (offered !== undefined && Object.keys(offered.unenforcedKeywords).length > 0)
      this.warnUnenforced(request, offered.unenforcedKeywords);
    const loaded = await this.loadModel(request.model);
    const grammar = offered === undefined ? await this.grammarFor(request) : undefined;
    const sequence = await loaded.sequences.acquire(options.signal);

    // One controller stops generation for both reasons: the caller's signal, and a consumer that left.
    const stop = new AbortController();
    const onCallerAbort = (): void => stop.abort(options.signal.reason);
    options.signal.addEventListener('abort', onCallerAbort, { once: true });
    if (options.signal.aborted) onCallerAbort();
    const { LlamaChat: Chat } = await loadNodeLlamaCpp();
    const chat = new Chat({ contextSequence: sequence, chatWrapper: loaded.chatWrapper });
    let generation: Promise<GenerationOutcome> | undefined;
    try {
      const promptTokens = loaded.chatWrapper
        .generateContextState({ chatHistory: history, ...(offered === undefined ? {} : { availableFunctions: offered.functions }) })
        .contextText.tokenize(loaded.model.tokenizer);
      if (promptTokens.length >= sequence.contextSize) throw contextOverflowError(request.model, promptTokens.length, sequence.contextSize);
      // The last prompt token is always evaluated again: generation needs its logits.
      const cachedInputTokens = Math.min(sequence.compareContextTokens(promptTokens).firstDifferentIndex, promptTokens.length - 1);
      const maxTokens = resolveMaxOutputTokens(request, this.settings, promptTokens.length, sequence.contextSize);
      const meterBefore = sequence.tokenMeter.getState();
      const channel = new ChunkChannel();
      let reasoningTokens = 0;
      const common = {
        ...sampling,
        maxTokens,
        signal: stop.signal,
        onResponseChunk: (chunk: LlamaChatResponseChunk) => {
          if (chunk.type === 'segment') reasoningTokens += chunk.tokens.length;
          channel.push(chunk);
        },
      };
      const generateOptions: LLamaChatGenerateResponseOptions<ChatModelFunctions> =
        offered === undefined
          ? { ...common, ...(grammar === undefined ? {} : { grammar }) }
          : {
              ...common,
              functions: offered.functions,
              ...(request.parallelToolCalls === false ? { maxParallelFunctionCalls: 1 } : {}),
              onFunctionCallParamsChunk: (chunk) => channel.push(chunk),
            };
      generation = this.generate(chat, history, generateOptions).finally(() => channel.end());

      const mapper = new LlamaCppChunkMapper();
      let sentAnything = false;
      for await (const chunk of channel.drain()) {
        for (const part of 'callIndex' in chunk ? mapper.mapFunctionCallChunk(chunk) : mapper.map(chunk)) {
          sentAnything = true;
          yield part;
        }
      }
      const outcome = await generation;
      if (options.signal.aborted) throw options.signal.reason;
      if (!outcome.ok) {
        const error = isServiceError(outcome.error) ? outcome.error : generationError(request.model, outcome.error);
        this.logger?.warn({ modelPath: this.modelPath, error: String(outcome.error) }, 'llama-cpp generation failed');
        if (!sentAnything) throw error;
        yield { type: 'error', error };
        return;
      }
      const meter = sequence.tokenMeter.diff(meterBefore);
      yield* mapper.finishFunctionCalls(outcome.response.functionCalls ?? []);
      yield* mapper.finish();
      yield finishPart(
        outcome.response.metadata,
        request,
        { promptTokens: promptTokens.length, cachedInputTokens, reasoningTokens },
        meter,
      );
    } finally {
      options.signal.removeEventListener('abort', onCallerAbort);
      // Stops a generation the consumer walked away from; a no-op when it already finished.
      stop.abort(new Error('The stream consumer stopped reading.'));
      await generation;
      chat.dispose({ disposeSequence: false });
      loaded.sequences.release(sequence);
    }
  }

  private warnUnenforced(request: GenerationRequest, keywords: Record<string, string[]>): void {
    this.logger?.warn(
      { modelId: request.model, keywords },
      'llama-cpp cannot enforce these JSON Schema keywords of tool parameters; the arguments follow the rest of the schema',
    );
  }

  /** Runs one generation; never rejects, so that cleanup can always await it. */
  private async generate(
    chat: LlamaChat,
    history: ChatHistoryItem[],
    generateOptions: LLamaChatGenerateResponseOptions<ChatModelFunctions>,
  ): Promise<GenerationOutcome> {
    try {
      const response = await chat.generateResponse(history, { ...generateOptions, stopOnAbortSignal: true });
      return { ok: true, response };
    } catch (error) {
      return { ok: false, error };
    }
  }

  private async loadModel(modelId: string): Promise<LoadedLlamaCppModel> {
    try {
      return await this.runtime.load(this.modelPath);
    } catch (error) {
      this.logger?.warn({ modelId, modelPath: this.modelPath, error: String(error) }, 'llama-cpp could not load the GGUF file');
      throw modelLoadError(modelId, error);
    }
  }

  private async grammarFor(request: GenerationRequest): Promise<LlamaGrammar | undefined> {
    const format = request.responseFormat;
    if (format === undefined || format.type === 'text') return undefined;
    if (format.type === 'json_object') return this.runtime.jsonObjectGrammar();
    let converted;
    try {
      converted = convertToLlamaCppJsonSchema(format.schema);
    } catch (error) {
      if (error instanceof SchemaConversionError) throw unsupportedSchemaError(request.model, error.message);
      throw error;
    }
    if (converted.unenforcedKeywords.length > 0) {
      this.logger?.warn(
        { modelId: request.model, schemaName: format.name, keywords: converted.unenforcedKeywords },
        'llama-cpp cannot enforce these JSON Schema keywords; the output follows the rest of the schema',
      );
    }
    try {
      return await this.runtime.jsonSchemaGrammar(converted.schema);
    } catch (error) {
      throw unsupportedSchemaError(request.model, error instanceof Error ? error.message : String(error));
    }
  }
}

/** The generation's `finish` part with its exact usage (token counts of the prompt and the sequence's meter). */
function finishPart(
  metadata: LlamaChatResponse<ChatModelFunctions>['metadata'],
  request: GenerationRequest,
  counts: { promptTokens: number; cachedInputTokens: number; reasoningTokens: number },
  meter: { usedInputTokens: number; usedOutputTokens: number },
): StreamPart {
  const usage: Usage = {
    inputTokens: counts.promptTokens,
    cachedInputTokens: counts.cachedInputTokens,
    cacheWriteInputTokens: 0,
    cacheWrite1hInputTokens: 0,
    outputTokens: meter.usedOutputTokens,
    reasoningTokens: counts.reasoningTokens,
    requests: 1,
    estimated: false,
    raw: {
      promptTokens: counts.promptTokens,
      evaluatedTokens: meter.usedInputTokens,
      sampledTokens: meter.usedOutputTokens,
      stopReason: metadata.stopReason,
    },
  };
  return {
    type: 'finish',
    finishReason: mapLlamaCppFinishReason(metadata.stopReason),
    stopSequence:
      metadata.stopReason === 'customStopTrigger' ? matchedStopSequence(metadata.customStopTrigger, request.stopSequences ?? []) : null,
    usage,
  };
}
