/**
 * The provider contracts. Each backend folder under `providers/` implements some of these; services and
 * routes only ever see these interfaces (docs/design.md convention 1: never branch on a provider id).
 */
import type { Cancellation } from './cancellation.ts';
import type { GenerationRequest } from './generation.ts';
import type { StreamPart } from './stream-parts.ts';

export interface CallOptions {
  /**
   * Aborted when the client goes away or the request times out; providers must stop upstream work.
   * An AbortSignal or a CancellationSource (core/cancellation.ts); `abortSignalOf` gives an AbortSignal
   * for APIs that need one.
   */
  signal: Cancellation;
  /** Request id, forwarded upstream where the backend accepts one (for tracing). */
  requestId?: string;
  /**
   * Whom the work is for (the caller's organization id). An engine shared by every caller (the
   * built-in sentence encoder) serves tenants in turn, so one tenant's long job cannot hold it.
   */
  tenant?: string;
  /**
   * The caller assembles the whole answer before replying (a non-streaming client request). A backend
   * may then fetch it in one piece instead of as an upstream stream, and emit it as the same parts:
   * one JSON parse instead of one per chunk.
   */
  preferWholeResponse?: boolean;
  /** The upstream attempt's trace, when tracing is on: its headers go upstream, the call reports to it. */
  trace?: UpstreamTrace;
}

/**
 * What a provider tells the trace of one upstream call (telemetry/ implements it): the W3C
 * trace-context headers to send, and when the call connected, answered and ended.
 */
export interface UpstreamTrace {
  /** `traceparent` (and `tracestate`) of the attempt, sent with the upstream request. */
  readonly headers: Readonly<Record<string, string>>;
  /** The request was handed to a connection (after any wait in the pool and the TCP/TLS connect). */
  connected(): void;
  /** The response's status and headers arrived (first byte). */
  responded(status: number): void;
  /** The response body ended, or the call failed. */
  ended(error?: unknown): void;
}

/** A chat/text model. Streaming is the only primitive: non-streaming answers are assembled from parts. */
export interface LanguageModel {
  /**
   * Starts a generation. The returned iterable yields canonical parts and ends with exactly one `finish`
   * or `error` part. Errors before any output may also be thrown (as ServiceError) so that a fallback
   * model can be tried; once a part has been yielded, errors come as an `error` part. It may be
   * Batched (core/batched.ts), handing over the parts of one upstream read together.
   */
  stream(request: GenerationRequest, options: CallOptions): AsyncIterable<StreamPart>;
}

export interface EmbeddingResult {
  /** One vector per input, in input order. */
  embeddings: number[][];
  /** Prompt tokens consumed. */
  inputTokens: number;
  estimated: boolean;
}

export interface EmbeddingModel {
  /** Largest number of inputs per upstream call; callers split larger arrays. */
  readonly maxBatchSize: number;
  embed(inputs: string[], options: CallOptions & { dimensions?: number }): Promise<EmbeddingResult>;
}

/** SPEC moderation categories. */
export type ModerationCategory = 'hate' | 'self-harm' | 'sexual' | 'violence';

export interface ModerationVerdict {
  flagged: boolean;
  categories: Record<ModerationCategory, boolean>;
  /** Scores in 0..1 per category. */
  categoryScores: Record<ModerationCategory, number>;
}

export interface ModerationModel {
  classify(inputs: string[], options: CallOptions): Promise<ModerationVerdict[]>;
}

export interface ImageGenerationRequest {
  prompt: string;
  /** Number of images, 1-10. */
  n: number;
  /** `WxH`, from the model's allowed sizes. */
  size: string;
  /** The caller's quality (`standard`, `hd`, `low`...), sent only to a model that `honoursQuality`. */
  quality?: string;
  user?: string;
}

export interface GeneratedImage {
  /** PNG (or the upstream's format) bytes. */
  bytes: Buffer;
  mediaType: string;
  revisedPrompt?: string;
}

export interface ImageModel {
  generate(request: ImageGenerationRequest, options: CallOptions): Promise<GeneratedImage[]>;
  /** True when the backend generates at the request's `quality` (else the parameter is reported as ignored). */
  readonly honoursQuality?: boolean;
}

/** Per-model settings from the catalogue (ModelConfig) that a backend may need to build a request. */
export interface LanguageModelSettings {
  /**
   * The model's `maxOutputTokens` from config, tokens: the cap a backend sends when the request names
   * none but the backend requires one (Anthropic `max_tokens`, llama.cpp `n_predict`).
   */
  defaultMaxOutputTokens?: number;
}

/**
 * What a provider folder's factory returns for one configured provider: the model kinds it can serve.
 * `providers/registry.ts` maps provider kinds to factories; nothing else names a provider.
 */
export interface ProviderInstance {
  /** The model's `upstreamModel` (or id) selects what to run. Throws a 400 ServiceError if unsupported. */
  languageModel?(upstreamModel: string, settings?: LanguageModelSettings): LanguageModel;
  embeddingModel?(upstreamModel: string): EmbeddingModel;
  moderationModel?(upstreamModel: string): ModerationModel;
  imageModel?(upstreamModel: string): ImageModel;
  /** Releases pools, native handles and workers. */
  close?(): Promise<void>;
}
