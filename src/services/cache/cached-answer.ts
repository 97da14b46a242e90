/**
 * A cached answer: the canonical parts of a completed generation (core/stream-parts.ts), stored once and
 * encoded afresh for every hit, so that one entry serves a streamed and a JSON request in any format
 * the endpoint speaks, each with fresh ids and timestamps (the encoders make them).
 */
import type { GenerationWarning } from '../../core/generation.ts';
import type { StreamPart } from '../../core/stream-parts.ts';

export interface CachedAnswer {
  /** Format version of the stored JSON. */
  version: 1;
  /** The content parts and the final `finish` part, in order; no upstream ids. */
  parts: StreamPart[];
  /** Settings the answering backend did not honour (they apply to the replay as well). */
  warnings: GenerationWarning[];
  /** Prompt tokens counted locally for the original request. */
  promptTokens: number;
  /** When it was stored, ms since epoch. */
  storedAtMs: number;
  /** When it expires, ms since epoch. */
  expiresAtMs: number;
  /**
   * A one-shot endpoint's answer (embeddings) as its JSON body; its usage is the `finish` part's.
   * Absent for generations, which are encoded afresh from `parts`.
   */
  body?: Record<string, unknown>;
}

/** Parses a stored entry; undefined for anything that is not one (another version, a damaged value). */
export function parseCachedAnswer(text: string): CachedAnswer | undefined {
  try {
    const value = JSON.parse(text) as Partial<CachedAnswer> | null;
    if (value === null || value.version !== 1 || !Array.isArray(value.parts) || typeof value.expiresAtMs !== 'number') return undefined;
    const last = value.parts[value.parts.length - 1] as StreamPart | undefined;
    if (last?.type !== 'finish') return undefined;
    return value as CachedAnswer;
  } catch {
    return undefined;
  }
}

/** The finish part of an entry (always its last part). */
export function finishOf(answer: CachedAnswer): Extract<StreamPart, { type: 'finish' }> {
  return answer.parts[answer.parts.length - 1] as Extract<StreamPart, { type: 'finish' }>;
}
