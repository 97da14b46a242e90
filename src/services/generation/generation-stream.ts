/**
 * What the generation service takes and hands back: the options of a generation, the committed stream
 * of canonical parts (with which model and deployment answer), and the ports it calls.
 */
import type { DeploymentTarget, ModelConfig } from '../../config/index.ts';
import type { Batched, BatchStage } from '../../core/batched.ts';
import type { GenerationWarning } from '../../core/generation.ts';
import type { CallOptions, LanguageModel } from '../../core/language-model.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import type { RequestTrace } from '../../telemetry/trace-types.ts';
import type { CapabilityOptions } from './model-resolution.ts';
import type { WholeAnswer } from './whole-answer.ts';

/** Where the service gets model objects from; `providers/registry.ts` ProviderRegistry is one. */
export interface LanguageModelSource {
  /** The chat model of `model` on one of its deployments (the router's choice). */
  languageModel(model: ModelConfig, deployment?: DeploymentTarget): LanguageModel;
}

/** The pino logger methods the service uses. */
export interface GenerationLogger {
  warn(object: Record<string, unknown>, message: string): void;
  error(object: Record<string, unknown>, message: string): void;
}

export interface GenerationStreamOptions extends CallOptions, CapabilityOptions {
  /**
   * The prompt's tokens, counted once by the caller (MeteredGenerations counts them in slices that
   * yield to the event loop): deployments' tokens-per-minute limits and usage a backend did not report
   * use it instead of counting again. Absent: counted here, synchronously, when needed.
   */
  promptTokens?: number;
  /**
   * Synchronous stages run over the committed stream inside the service's own loop, in order, after
   * sequencing (core/batched.ts): the output cap and the usage meter. A stage that ends the stream
   * releases the backend; every stage is closed once when the stream is over.
   */
  stages?: readonly BatchStage<StreamPart>[];
  /** The request's trace (tracing on): each upstream attempt is a client span under it. */
  requestTrace?: RequestTrace | undefined;
}

/** The canonical parts of one generation (item by item or in batches), plus which model is answering. Read it once. */
export interface GenerationStream extends Batched<StreamPart> {
  /** The catalogue model that is answering: the one asked for, or the fallback that took over. */
  readonly model: ModelConfig;
  /** The catalogue model the request named (after alias resolution). */
  readonly requestedModel: ModelConfig;
  /** Upstream attempts made, over all models, up to and including the one that is answering (>= 1). */
  readonly attempts: number;
  /** Request settings the answering backend did not honour (from its `response-metadata`). */
  readonly warnings: readonly GenerationWarning[];
  /** The answering deployment: its provider id (`#n` for the n-th key of a provider with several). */
  readonly deployment: string;
  /**
   * The answer, settled, when the backend answered whole (a non-streamed request): take it instead of
   * reading the stream (whole-answer.ts). Undefined for a streamed answer.
   */
  readonly whole: WholeAnswer | undefined;
}

/** A committed generation with what answered it (a class: a literal with a computed symbol key is slow to build). */
export class AnsweringStream implements GenerationStream {
  constructor(
    private readonly parts: Batched<StreamPart>,
    readonly model: ModelConfig,
    readonly requestedModel: ModelConfig,
    readonly attempts: number,
    readonly warnings: readonly GenerationWarning[],
    readonly deployment: string,
    readonly whole: WholeAnswer | undefined,
  ) {}

  batches(): AsyncIterable<readonly StreamPart[]> {
    return this.parts.batches();
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamPart> {
    return this.parts[Symbol.asyncIterator]();
  }
}
