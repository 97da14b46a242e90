/**
 * Bounded concurrency for one loaded model. A llama.cpp context holds a fixed number of sequences
 * (independent KV-cache slots evaluated together in shared batches); each running generation needs one
 * for itself. Requests beyond that wait here in arrival order, and a waiting request whose signal
 * aborts leaves the queue at once. A released sequence keeps its tokens, so the next request that
 * shares a prefix with it (the same conversation one turn later) skips re-evaluating that prefix.
 */
import type { LlamaContextSequence } from 'node-llama-cpp';
import type { Cancellation } from '../../core/cancellation.ts';

interface Waiter {
  resolve(sequence: LlamaContextSequence): void;
  reject(reason: unknown): void;
  signal: Cancellation;
  onAbort(): void;
}

export class LlamaCppSequencePool {
  private readonly free: LlamaContextSequence[];
  private readonly waiters: Waiter[] = [];
  private closed = false;

  constructor(sequences: readonly LlamaContextSequence[]) {
    this.free = [...sequences];
  }

  /** Requests waiting for a sequence. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Sequences not in use. */
  get available(): number {
    return this.free.length;
  }

  /** Resolves with a sequence for the caller's exclusive use; rejects with the signal's reason if it aborts first. */
  acquire(signal: Cancellation): Promise<LlamaContextSequence> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.closed) return Promise.reject(new Error('The model was unloaded.'));
    const sequence = this.free.pop();
    if (sequence !== undefined) return Promise.resolve(sequence);
    return new Promise<LlamaContextSequence>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.waiters.indexOf(waiter);
          if (index !== -1) this.waiters.splice(index, 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Hands the sequence to the longest-waiting request, or keeps it for the next one. */
  release(sequence: LlamaContextSequence): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) {
      this.free.push(sequence);
      return;
    }
    waiter.signal.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(sequence);
  }

  /** Rejects every waiting request; used when the model is unloaded. */
  close(reason: unknown): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.reject(reason);
    }
  }
}
