/**
 * Records a generation for the cache as it streams: a stage of the generation service's own loop
 * (core/batched.ts `BatchStage`), after the output cap and the meter, so it sees exactly what the
 * client is sent. Only a completed answer is stored: one whose `finish` part arrived with no `error`
 * part before it. A stream that failed, was cut, or was left by its client is never stored; an answer
 * past the entry size limit is not either. Whatever happens, the flight is landed so that followers
 * go on.
 */
import type { BatchStage } from '../../core/batched.ts';
import type { GenerationWarning } from '../../core/generation.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import type { Usage } from '../../core/usage.ts';
import type { CachedAnswer } from './cached-answer.ts';

/** Where a completed answer goes, and what is told when the recording is over. */
export interface RecordingTarget {
  /** Stores the answer (errors are the target's own business: the client's answer is not affected). */
  store(answer: CachedAnswer): Promise<void>;
  /** Called once, after `store` when there was something to store. */
  done(): Promise<void>;
}

export class CacheRecorder implements BatchStage<StreamPart> {
  readonly ended = false;
  private readonly parts: StreamPart[] = [];
  private warnings: GenerationWarning[] = [];
  private bytes = 0;
  private finished = false;
  private failed = false;
  private closed = false;
  private body: Record<string, unknown> | undefined;

  /** Prompt tokens counted locally, set once counted (before the stream starts). */
  promptTokens = 0;

  constructor(
    private readonly target: RecordingTarget,
    private readonly ttlMs: number,
    /** Deltas past this many characters: not stored (the stored JSON would exceed the entry limit). */
    private readonly maxBytes: number,
  ) {}

  push(batch: readonly StreamPart[]): readonly StreamPart[] {
    if (this.failed || this.finished) return batch;
    for (const part of batch) {
      switch (part.type) {
        case 'response-metadata':
          // Upstream ids are not replayed; warnings are.
          if (part.warnings !== undefined) this.warnings = [...this.warnings, ...part.warnings];
          continue;
        case 'error':
          this.failed = true;
          return batch;
        case 'finish':
          this.finished = true;
          break;
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-input-delta':
          this.bytes += part.delta.length;
          break;
        case 'reasoning-signature':
          this.bytes += part.signature.length;
          break;
        case 'reasoning-redacted':
          this.bytes += part.data.length;
          break;
        default:
          break;
      }
      this.parts.push(part);
    }
    if (this.bytes > this.maxBytes) this.failed = true;
    return batch;
  }

  /** Stores the answer if it completed; lands the flight either way. Not awaited by the stream: bookkeeping never delays its end. */
  close(): void {
    void this.finish();
  }

  /** Stores a one-shot endpoint's JSON answer (embeddings) with its usage; a copy, as the edge adds `_metadata` to the original. */
  storeJson(body: Record<string, unknown>, usage: Usage): Promise<void> {
    this.body = structuredClone(body);
    this.parts.push({ type: 'finish', finishReason: 'stop', usage });
    this.finished = true;
    return this.finish();
  }

  /** Ends the recording without an answer (the generation failed before its first part). */
  abandon(): Promise<void> {
    this.failed = true;
    return this.finish();
  }

  private async finish(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.finished && !this.failed) {
        const now = Date.now();
        const answer: CachedAnswer = {
          version: 1,
          parts: this.parts,
          warnings: this.warnings,
          promptTokens: this.promptTokens,
          storedAtMs: now,
          expiresAtMs: now + this.ttlMs,
        };
        if (this.body !== undefined) answer.body = this.body;
        await this.target.store(answer);
      }
    } finally {
      await this.target.done();
    }
  }
}
