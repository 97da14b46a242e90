/**
 * The batch-level steps, each run by the one worker holding the batch's lease: validate the input file
 * (`validating` -> `in_progress`, or `failed`), move a batch whose lines are done to `finalizing`,
 * expire one whose 24 hours ran out (lines not run fail as `batch_expired`), and write the result files
 * with the final status (`completed`, `expired`, or the results of a `canceled` or `failed` batch).
 *
 * A step that cannot reach a dependency (object store or database away: `service_unavailable` or an
 * unreachable error) waits (step-waits.ts): it backs off on every instance (`retry_at`), capped at
 * `maxStepWaitMs`, for as long as it takes, without counting an attempt; the result files of a batch
 * whose lines are done are written as soon as the store is back. Any other error is counted: it backs
 * off twice as long each time and, after `maxStepAttempts`, fails a batch still validating or running;
 * writing the result files is never given up (the lines were run and billed), it is retried at the
 * cap. With tracing on, a batch that reaches its end here gets the root span of its trace
 * (`Tracing.endBatch`).
 */
import { backoff, type BackoffPolicy } from '../core/retry.ts';
import { isUnreachableError } from '../core/circuit-breaker.ts';
import { isServiceError } from '../core/service-error.ts';
import type { FileRecord } from '../services/files/file-record.ts';
import type { BatchChanges } from './batch-store.ts';
import type { FileService } from '../services/files/file-service.ts';
import type { Tracing } from '../telemetry/trace-types.ts';
import type { BatchRecord, BatchStatus } from './batch-records.ts';
import { ResultFiles } from './result-files.ts';
import { StepWaits } from './step-waits.ts';
import { validateBatchInput } from './validate-batch-input.ts';
import type { WorkerState } from './worker-state.ts';

/** How a finalized batch ends. */
type FinalOutcome = 'completed' | 'expired' | 'canceled' | 'failed';

const EXPIRED_MESSAGE = 'This request was not executed before the batch expired (24-hour completion window).';

/** What a batch-level step failed on, for the log and, at the last attempt, the batch's `errors`. */
const STEP_NAMES: Partial<Record<BatchStatus, string>> = {
  validating: 'validate',
  in_progress: 'finish',
  finalizing: 'finalize',
  canceled: 'write results',
  failed: 'write results',
};

export interface BatchStepsOptions {
  files: FileService;
  /** Largest input line, bytes. */
  maxLineBytes: number;
  maxRequestsPerBatch: number;
  requestsPerBatchOf: ((organizationId: string) => Promise<number>) | undefined;
  /** Backoff of a failing step: its first delay, doubled per failure, and its cap. */
  stepBackoff: BackoffPolicy;
  maxStepAttempts: number;
  /** Wait of a step that cannot reach a dependency: its first delay, doubled per wait in a row, and its cap. */
  stepWait: BackoffPolicy;
  tracing: Pick<Tracing, 'endBatch'> | undefined;
}

export class BatchSteps {
  /** Steps running, by batch id (this worker holds their batch lease). */
  private readonly running = new Map<string, Promise<void>>();
  private readonly results: ResultFiles;
  private readonly waits: StepWaits;

  constructor(
    private readonly state: WorkerState,
    private readonly options: BatchStepsOptions,
  ) {
    this.results = new ResultFiles(state.repository.lines, options.files, state.clock);
    this.waits = new StepWaits(options.stepWait, state.log, () => state.clock.now());
  }

  get size(): number {
    return this.running.size;
  }

  /** The batches whose lease this worker holds for a step. */
  batchIds(): IterableIterator<string> {
    return this.running.keys();
  }

  inFlight(): Promise<void>[] {
    return [...this.running.values()];
  }

  /** Runs the steps of a batch just claimed; its lease is given back when they stop. */
  start(claimed: BatchRecord): void {
    // The batch as last seen by the step (its status moves on as the steps go).
    const progress = { batch: claimed };
    const run = this.step(progress)
      .then(() => this.waits.worked(claimed.id))
      .catch((error: unknown) => this.stepFailed(progress.batch, error))
      .catch((error: unknown) =>
        this.state.log?.error({ err: error, batch_id: claimed.id }, 'batch step failure could not be recorded; its lease lapses instead'),
      )
      .finally(async () => {
        this.running.delete(claimed.id);
        await this.state.repository.leases.releaseLease(claimed.id, this.state.workerId).catch(() => undefined);
        this.state.doorbell.ring();
      });
    this.running.set(claimed.id, run);
  }

  /** Moves a claimed batch through its batch-level steps until it needs lines run, finishes, or work must stop. */
  private async step(progress: { batch: BatchRecord }): Promise<void> {
    const { clock } = this.state;
    let batch: BatchRecord | undefined = progress.batch;
    while (batch !== undefined && !this.state.stopping) {
      progress.batch = batch;
      switch (batch.status) {
        case 'validating':
          batch = clock.now() >= batch.expiresAt ? await this.expire(batch) : await this.validate(batch);
          break;
        case 'in_progress':
          if (clock.now() >= batch.expiresAt) {
            batch = await this.expire(batch);
          } else {
            await this.state.repository.finishIfDone(batch.id, clock.now());
            batch = await this.reload(batch.id);
            // Still running (lines pending): the lines are claimed separately, by any instance.
            if (batch?.status === 'in_progress') return;
          }
          break;
        case 'finalizing':
          batch = await this.finalize(batch, 'completed');
          break;
        case 'canceled':
        case 'failed':
          if (!batch.resultsWritten) await this.finalize(batch, batch.status);
          return;
        default:
          return;
      }
    }
  }

  /**
   * A batch-level step threw. A dependency it could not reach (object store, database) makes it wait:
   * no attempt counted, backing off up to `stepWait.maxMs`, as long as it takes. Anything else is
   * counted and backs off twice as long each time; after `maxStepAttempts` a batch still validating or
   * running fails, while writing the result files goes on being retried at the cap, quietly.
   */
  private async stepFailed(batch: BatchRecord, error: unknown): Promise<void> {
    const { repository, workerId, clock } = this.state;
    const step = STEP_NAMES[batch.status] ?? batch.status;
    if (isUnreachableError(error)) {
      const waitMs = this.waits.next(batch.id, step, error);
      await repository.leases.stepWait(batch.id, workerId, clock.now(), waitMs);
      return;
    }
    const attempts = batch.stepAttempts + 1;
    const message = error instanceof Error ? error.message : String(error);
    const writesResults = batch.status !== 'validating' && batch.status !== 'in_progress';
    if (attempts >= this.options.maxStepAttempts && !writesResults) {
      this.state.log?.error({ err: error, batch_id: batch.id, step, attempts }, 'batch step keeps failing; the batch fails');
      await this.giveUp(batch, `The batch could not ${step} after ${attempts} attempts: ${message}`);
      return;
    }
    const backoffMs = backoff(this.options.stepBackoff, attempts - 1);
    if (attempts < this.options.maxStepAttempts)
      this.state.log?.error({ err: error, batch_id: batch.id, step, attempts, retry_in_ms: backoffMs }, 'batch step failed; backing off');
    else if (attempts === this.options.maxStepAttempts)
      this.state.log?.error(
        { err: error, batch_id: batch.id, step, attempts, retry_in_ms: backoffMs },
        'batch result files keep failing to be written; retried at the longest backoff until they are (logged once)',
      );
    await repository.leases.stepFailed(batch.id, workerId, clock.now(), backoffMs);
  }

  /**
   * A batch still validating or running fails for good with `message` in its `errors` (results of
   * lines already done are still written, by the next step).
   */
  private async giveUp(batch: BatchRecord, message: string): Promise<void> {
    const { repository, workerId } = this.state;
    const now = this.state.clock.now();
    const error = {
      code: batch.status === 'validating' ? 'invalid_input_file' : 'server_error',
      message,
      line: null,
      param: batch.status === 'validating' ? 'input_file_id' : null,
    };
    if (batch.status === 'validating') {
      await repository.lines.deleteRequests(batch.id);
      const failed = await repository.leases.transition(batch.id, workerId, ['validating'], {
        status: 'failed',
        failed_at: now,
        results_written: 1,
        errors: JSON.stringify([error]),
      });
      if (failed) this.ended(batch, 'failed', now);
    } else if (batch.status === 'in_progress') {
      await repository.failRunning(batch.id, error, 'batch_failed', now);
    }
  }

  /** The batch as stored, or undefined when this worker no longer holds its lease. */
  private async reload(batchId: string): Promise<BatchRecord | undefined> {
    const batch = await this.state.repository.findById(batchId);
    return batch?.leaseOwner === this.state.workerId ? batch : undefined;
  }

  private async validate(batch: BatchRecord): Promise<BatchRecord | undefined> {
    const { repository, workerId, clock } = this.state;
    let content;
    try {
      content = (await this.options.files.openContent(batch.organizationId, batch.inputFileId)).content;
    } catch (error) {
      // The store or the database is away: the step waits for it (stepFailed); never the customer's error.
      if (isUnreachableError(error)) throw error;
      // The file is gone, expired, or its bytes are missing from storage: no retry brings them back.
      if (!isServiceError(error)) throw error;
      await this.failValidation(batch, [{ code: 'invalid_input_file', message: error.message, line: null, param: 'input_file_id' }]);
      return this.reload(batch.id);
    }
    // A worker that died half-way through validation may have stored some rows already.
    await repository.lines.deleteRequests(batch.id);
    const { maxRequestsPerBatch, requestsPerBatchOf } = this.options;
    const maxRequests = requestsPerBatchOf === undefined ? maxRequestsPerBatch : await requestsPerBatchOf(batch.organizationId);
    const summary = await validateBatchInput(
      content,
      { endpoint: batch.endpoint, maxLineBytes: this.options.maxLineBytes, maxRequests },
      (requests) => repository.lines.insertRequests(batch.id, requests),
    );
    if (summary.errors.length > 0) {
      await repository.lines.deleteRequests(batch.id);
      await this.failValidation(batch, summary.errors);
    } else {
      await repository.leases.transition(batch.id, workerId, ['validating'], {
        status: 'in_progress',
        in_progress_at: clock.now(),
        total: summary.total,
      });
      this.state.doorbell.ring();
    }
    return this.reload(batch.id);
  }

  /** validating -> failed with `errors` (nothing to write: no line ran). */
  private async failValidation(batch: BatchRecord, errors: readonly object[]): Promise<void> {
    const now = this.state.clock.now();
    const failed = await this.state.repository.leases.transition(batch.id, this.state.workerId, ['validating'], {
      status: 'failed',
      failed_at: now,
      results_written: 1,
      errors: JSON.stringify(errors),
    });
    if (failed) this.ended(batch, 'failed', now);
  }

  /** The window ran out: lines not run fail as `batch_expired`, results are written, status expired. */
  private async expire(batch: BatchRecord): Promise<BatchRecord | undefined> {
    await this.state.repository.lines.failPending(batch.id, 'batch_expired', EXPIRED_MESSAGE, this.state.clock.now());
    const current = await this.reload(batch.id);
    return current === undefined ? undefined : this.finalize(current, 'expired');
  }

  /**
   * Writes the output and error files and records them with the final status, in one transaction.
   * Once recorded the files are the batch's: a failure after that (removing the request rows) leaves
   * them be.
   */
  private async finalize(batch: BatchRecord, outcome: FinalOutcome): Promise<BatchRecord | undefined> {
    const { repository, workerId } = this.state;
    const written: FileRecord[] = [];
    let now: number;
    let recorded: boolean;
    try {
      const output = await this.results.write(batch, 'completed');
      if (output !== undefined) written.push(output);
      const errors = await this.results.write(batch, 'failed');
      if (errors !== undefined) written.push(errors);
      now = this.state.clock.now();
      recorded = await repository.leases.finish(
        batch.id,
        workerId,
        finalFrom(outcome),
        written,
        finalChanges(outcome, output, errors, now),
      );
    } catch (error) {
      await this.results.discard(written);
      throw error;
    }
    if (!recorded) {
      await this.results.discard(written);
      return this.reload(batch.id);
    }
    this.ended(batch, outcome, now);
    // The result files now hold everything the rows did; the request bodies need not stay.
    await repository.lines.deleteRequests(batch.id);
    return this.reload(batch.id);
  }

  /** The batch reached `status` at `now` (recorded): its trace gets its root span. */
  private ended(batch: BatchRecord, status: BatchStatus, now: number): void {
    this.options.tracing?.endBatch({
      batchId: batch.id,
      endpoint: batch.endpoint,
      status,
      createdAt: batch.createdAt,
      endedAt: now,
      total: batch.total,
      completed: batch.completed,
      failed: batch.failed,
    });
  }
}

/** The statuses a batch may be finalized from, per final outcome. */
function finalFrom(outcome: FinalOutcome): BatchStatus[] {
  return outcome === 'completed' ? ['finalizing'] : outcome === 'expired' ? ['validating', 'in_progress'] : [outcome];
}

/** The batch's columns once its result files are written: the files, and the final status with its time. */
function finalChanges(outcome: FinalOutcome, output: FileRecord | undefined, errors: FileRecord | undefined, now: number): BatchChanges {
  const files = { output_file_id: output?.id ?? null, error_file_id: errors?.id ?? null, results_written: 1 };
  if (outcome === 'completed') return { ...files, status: 'completed', completed_at: now };
  if (outcome === 'expired') return { ...files, status: 'expired', expired_at: now };
  return files;
}
