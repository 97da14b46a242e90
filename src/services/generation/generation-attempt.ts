/**
 * One upstream attempt of a generation, for the service's attempts loop (generation-service.ts): call
 * the leased deployment's model, wait (under an idle watchdog that only counts while waiting for the
 * backend) for its first content part, the commit point; then run the committed stream, sequenced so
 * that blocks never overlap, through the caller's stages in the same loop, with normalised usage. A
 * failure before the commit point is returned for the loop to decide on (another deployment, a retry,
 * a fallback); after it, it is a final `error` part. A non-streamed request whose backend answered whole
 * (the committed batch already holds the answer's last part) is settled at once instead, with no stream
 * machinery: whole-answer.ts.
 */
import { CancellationSource, type Cancellation } from '../../core/cancellation.ts';
import type { GenerationRequest, GenerationWarning } from '../../core/generation.ts';
import type { CallOptions } from '../../core/language-model.ts';
import { isServiceError, serverError, type ServiceError } from '../../core/service-error.ts';
import { batched, batchesOf, closeIterator, closeStages, pushThroughStages, type Batched, type BatchStage } from '../../core/batched.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { upstreamTimeoutError } from '../../core/upstream-error.ts';
import type { AttemptTrace } from '../../telemetry/trace-types.ts';
import { startAttemptTrace } from './attempt-trace.ts';
import type { GenerationLogger, GenerationStreamOptions, LanguageModelSource } from './generation-stream.ts';
import type { ResolvedModel } from './model-resolution.ts';
import type { Lease } from './routing/router.ts';
import { CommittedParts, endsAnswer } from './committed-parts.ts';
import { WholeAnswer } from './whole-answer.ts';

/**
 * An attempt's result: a committed stream (and, when the backend answered whole, the settled answer it
 * reads: take one or the other), or the error it failed with before its first content part.
 */
export type AttemptOutcome =
  | { stream: Batched<StreamPart>; whole?: WholeAnswer | undefined; warnings: readonly GenerationWarning[]; error?: undefined }
  | { stream?: undefined; error: ServiceError };

/** Runs attempts on leased deployments (one per service). */
export class AttemptRunner {
  constructor(
    private readonly registry: LanguageModelSource,
    private readonly logger: GenerationLogger | undefined,
  ) {}

  /** One upstream attempt (`attemptNumber` of the request, `retry` of its model), traced when the request is. */
  start(
    candidate: ResolvedModel,
    lease: Lease,
    request: GenerationRequest,
    options: GenerationStreamOptions,
    attemptNumber: number,
    retry: number,
  ): Promise<AttemptOutcome> {
    if (options.requestTrace === undefined) return this.runAttempt(candidate, lease, request, options, undefined);
    return this.tracedAttempt(
      candidate,
      lease,
      request,
      options,
      startAttemptTrace(options.requestTrace, candidate.model, lease, attemptNumber, retry),
    );
  }

  /** An attempt in a client span of its own; a failure before the first content part ends the span failed. */
  private async tracedAttempt(
    candidate: ResolvedModel,
    lease: Lease,
    request: GenerationRequest,
    options: GenerationStreamOptions,
    traced: AttemptTrace,
  ): Promise<AttemptOutcome> {
    try {
      const outcome = await this.runAttempt(candidate, lease, request, options, traced);
      if (outcome.error !== undefined) {
        traced.fail(outcome.error);
        traced.end();
      }
      return outcome;
    } catch (error) {
      traced.fail(error);
      traced.end();
      throw error;
    }
  }

  /** One upstream attempt on the leased deployment, run up to its first content part. */
  private async runAttempt(
    candidate: ResolvedModel,
    lease: Lease,
    request: GenerationRequest,
    options: GenerationStreamOptions,
    traced: AttemptTrace | undefined,
  ): Promise<AttemptOutcome> {
    const attempt = new Attempt(lease.deployment.provider.timeoutMs, options.signal);
    attempt.trace = traced;
    let iterator: AsyncIterator<readonly StreamPart[]>;
    try {
      const model = this.registry.languageModel(candidate.model, lease.deployment.target);
      const callOptions: CallOptions = { signal: attempt.signal };
      if (options.requestId !== undefined) callOptions.requestId = options.requestId;
      if (options.preferWholeResponse === true) callOptions.preferWholeResponse = true;
      if (traced !== undefined) callOptions.trace = traced;
      iterator = batchesOf(model.stream(request, callOptions))[Symbol.asyncIterator]();
    } catch (error) {
      attempt.dispose(false);
      return { error: this.toServiceError(error, attempt, candidate) };
    }
    /** `response-metadata` parts that came before the first content part (made when one comes). */
    let held: StreamPart[] | undefined;
    try {
      for (;;) {
        attempt.arm();
        const result = await iterator.next();
        attempt.disarm();
        if (result.done === true) {
          attempt.dispose(false);
          return { error: backendEndedWithoutResult() };
        }
        const batch = result.value;
        const first = batch.findIndex(isContent);
        if (first === -1) {
          held ??= [];
          for (const part of batch) held.push(part);
          continue;
        }
        const part = batch[first]!;
        if (part.type === 'error') {
          attempt.dispose(false);
          void closeIterator(iterator);
          return { error: part.error };
        }
        if (first > 0) {
          held ??= [];
          for (let index = 0; index < first; index++) held.push(batch[index]!);
        }
        lease.firstByte();
        let warnings: readonly GenerationWarning[] = NO_WARNINGS;
        if (held !== undefined)
          for (const metadata of held) {
            if (metadata.type !== 'response-metadata') continue;
            if (metadata.warnings !== undefined) warnings = [...warnings, ...metadata.warnings];
            if (traced !== undefined && metadata.upstreamModel !== undefined) traced.responseModel(metadata.upstreamModel);
          }
        traced?.committed();
        const committed = held === undefined || held.length === first ? batch : [...held, ...batch.slice(first)];
        const stages = options.stages ?? NO_STAGES;
        const promptTokens = options.promptTokens;
        if (options.preferWholeResponse === true && endsAnswer(committed)) {
          const whole = settleWhole(iterator, committed, attempt, lease, request, stages, promptTokens);
          return { stream: batched(() => whole.batches()), whole, warnings };
        }
        return {
          stream: batched(() => this.continueStream(iterator, committed, attempt, lease, candidate, request, stages, promptTokens)),
          warnings,
        };
      }
    } catch (error) {
      attempt.dispose(false);
      void closeIterator(iterator);
      if (options.signal.aborted) throw options.signal.reason;
      return { error: this.toServiceError(error, attempt, candidate) };
    }
  }

  /**
   * The committed stream, a batch at a time (core/batched.ts): the batch that held the first content
   * part, then the rest, sequenced so that blocks never overlap (the contract every encoder relies on);
   * failures become a final `error` part. Then the caller's stages (`options.stages`), in this same loop.
   */
  private async *continueStream(
    iterator: AsyncIterator<readonly StreamPart[]>,
    first: readonly StreamPart[],
    attempt: Attempt,
    lease: Lease,
    candidate: ResolvedModel,
    request: GenerationRequest,
    stages: readonly BatchStage<StreamPart>[],
    promptTokens: number | undefined,
  ): AsyncGenerator<readonly StreamPart[], void, undefined> {
    const committed = new CommittedParts(lease, request, promptTokens, attempt.trace);
    /** The backend was released (lease, watchdog, connection); done once. */
    let released = false;
    const release = (): void => {
      released = true;
      attempt.trace?.end();
      lease.end();
      attempt.dispose(!committed.backendDone);
      // Finished, failed or abandoned: either way release the backend and its connection.
      void closeIterator(iterator);
    };
    try {
      let batch: readonly StreamPart[] | undefined = first;
      for (;;) {
        let out: StreamPart[];
        let ended = false;
        if (batch === undefined) {
          let result: IteratorResult<readonly StreamPart[]> | undefined;
          let failure: ServiceError | undefined;
          attempt.arm();
          try {
            result = await iterator.next();
          } catch (error) {
            committed.backendDone = true;
            if (attempt.callerAborted) throw attempt.callerReason;
            failure = this.toServiceError(error, attempt, candidate);
          } finally {
            attempt.disarm();
          }
          if (result?.done === true) {
            committed.backendDone = true;
            failure = backendEndedWithoutResult();
          }
          if (failure !== undefined) {
            attempt.trace?.fail(failure);
            out = [{ type: 'error', error: failure }];
            ended = true;
          } else {
            batch = result!.value as readonly StreamPart[];
          }
        }
        if (batch !== undefined) {
          out = [];
          ended = committed.take(batch, out);
        }
        const staged = pushThroughStages(stages, out!);
        const passed = staged.batch;
        if (!ended && staged.ended) {
          // A stage ended the stream before the backend did (the output cap cut it): release the
          // backend before the last batch goes on, so that nobody waits on it.
          ended = true;
          release();
        }
        if (passed.length > 0) yield passed;
        if (ended) return;
        batch = undefined;
      }
    } finally {
      if (!released) release();
      await closeStages(stages);
    }
  }

  private toServiceError(error: unknown, attempt: Attempt, candidate: ResolvedModel): ServiceError {
    if (attempt.timedOut) return upstreamTimeoutError(attempt.timeoutMs, error);
    if (isServiceError(error)) return error;
    this.logger?.error({ model: candidate.model.id, provider: candidate.provider.id, err: error }, 'model backend failed unexpectedly');
    return serverError('internal_error', 'The model backend failed unexpectedly.', error);
  }
}

const NO_STAGES: readonly BatchStage<StreamPart>[] = [];
const NO_WARNINGS: readonly GenerationWarning[] = [];

/** Any part but `response-metadata`: the first one commits the attempt. */
function isContent(part: StreamPart): boolean {
  return part.type !== 'response-metadata';
}

/** Abort reason of an attempt whose result nobody reads any more. */
const ATTEMPT_ABANDONED = new Error('The generation attempt was abandoned.');

/**
 * One attempt's abort signal: aborted when the caller aborts, and by the idle watchdog when the
 * backend is silent for `timeoutMs`. The watchdog only counts while the service waits for the backend
 * (between `arm()` and `disarm()`), so a slow consumer (a client reading slowly) never trips it.
 */
class Attempt {
  private readonly source = new CancellationSource();
  private readonly watchdog: NodeJS.Timeout;
  private readonly onCallerAbort: () => void;
  private waiting = false;
  timedOut = false;
  /** The attempt's client span when the request is traced. */
  trace: AttemptTrace | undefined = undefined;

  constructor(
    readonly timeoutMs: number,
    private readonly callerSignal: Cancellation,
  ) {
    this.onCallerAbort = () => this.source.abort(callerSignal.reason);
    if (callerSignal.aborted) this.source.abort(callerSignal.reason);
    else callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
    this.watchdog = setTimeout(() => {
      if (!this.waiting || this.source.aborted) return;
      this.timedOut = true;
      this.source.abort(upstreamTimeoutError(timeoutMs));
    }, timeoutMs);
  }

  get signal(): Cancellation {
    return this.source;
  }

  get callerAborted(): boolean {
    return this.callerSignal.aborted;
  }

  get callerReason(): unknown {
    return this.callerSignal.reason;
  }

  /** The service starts waiting for the backend: the backend has `timeoutMs` from now. */
  arm(): void {
    this.waiting = true;
    this.watchdog.refresh();
  }

  /** The backend answered; the consumer's time does not count. */
  disarm(): void {
    this.waiting = false;
  }

  /**
   * Stops the watchdog and unlinks the caller's signal. `abandon`: the backend did not finish, so its
   * signal is aborted too (a safety net under closing its iterator).
   */
  dispose(abandon: boolean): void {
    clearTimeout(this.watchdog);
    this.callerSignal.removeEventListener('abort', this.onCallerAbort);
    if (abandon && !this.source.aborted) this.source.abort(ATTEMPT_ABANDONED);
  }
}

/**
 * A whole answer (its last part in the committed batch), settled at once: sequenced, through the stages
 * once, the backend released; the stages close when the answer is taken (whole-answer.ts). The same
 * steps, in the same order, as the streamed loop (`continueStream`) takes on such a batch.
 */
function settleWhole(
  iterator: AsyncIterator<readonly StreamPart[]>,
  batch: readonly StreamPart[],
  attempt: Attempt,
  lease: Lease,
  request: GenerationRequest,
  stages: readonly BatchStage<StreamPart>[],
  promptTokens: number | undefined,
): WholeAnswer {
  let passed: readonly StreamPart[] = NO_PARTS;
  let failure: { error: unknown } | undefined;
  const committed = new CommittedParts(lease, request, promptTokens, attempt.trace);
  try {
    const out: StreamPart[] = [];
    committed.take(batch, out);
    passed = pushThroughStages(stages, out).batch;
  } catch (error) {
    failure = { error };
  }
  attempt.trace?.end();
  lease.end();
  attempt.dispose(!committed.backendDone);
  // The backend answered: closing its iterator releases the body and the connection.
  void closeIterator(iterator);
  return new WholeAnswer(passed, stages, failure);
}

const NO_PARTS: readonly StreamPart[] = [];

/**
 * The backend's stream ended with neither a `finish` nor an `error` part (a backend that broke the
 * LanguageModel contract, core/language-model.ts). One fault, one code wherever it is noticed: before
 * the commit point it is the attempt's error (the loop may try another deployment), after it the
 * stream's final error part; both are 500 `service_unavailable`, like every other upstream fault.
 */
export function backendEndedWithoutResult(): ServiceError {
  return serverError('service_unavailable', 'The model backend ended its answer without a result.');
}
