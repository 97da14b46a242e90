/**
 * The canonical stream: every provider yields these parts, every client format encodes them.
 * Non-streaming answers are assembled from the same parts (see assemble-result.ts), so the two paths
 * cannot drift. Blocks are bracketed (`*-start`, deltas, `*-end`) and identified by `id`.
 *
 * The block rule, in two halves: a provider MAY interleave blocks of different ids (an OpenAI-compatible
 * upstream streams parallel tool calls by index); a format's encoder always RECEIVES them sequenced:
 * blocks never overlap, one ends before the next starts, none is open at `finish`. The generation
 * service runs every stream through core/sequence-blocks.ts, which turns the first half into the second,
 * so encoders are plain mappings with no buffering of their own.
 */
import type { FinishReason, GenerationWarning } from './generation.ts';
import type { ServiceError } from './service-error.ts';
import type { Usage } from './usage.ts';

export type StreamPart =
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  /** Signature of a reasoning block; may arrive as its own part before `reasoning-end`. */
  | { type: 'reasoning-signature'; id: string; signature: string }
  /** Redacted reasoning (opaque data), a complete block by itself. */
  | { type: 'reasoning-redacted'; id: string; data: string }
  | { type: 'reasoning-end'; id: string }
  /** A tool call begins: `id` is the call id (`call_...`/`toolu_...`), `toolName` its tool. */
  | { type: 'tool-input-start'; id: string; toolName: string }
  /** A fragment of the tool arguments' JSON text. Fragments concatenate to the full JSON. */
  | { type: 'tool-input-delta'; id: string; delta: string }
  | { type: 'tool-input-end'; id: string }
  /**
   * Upstream metadata known at the start (upstream response id, model name) and the request settings
   * the backend did not honour. Optional; comes before the first content part.
   */
  | { type: 'response-metadata'; upstreamId?: string; upstreamModel?: string; warnings?: GenerationWarning[] }
  /** Last part of a successful stream. */
  | { type: 'finish'; finishReason: FinishReason; stopSequence?: string | null; usage: Usage }
  /** The generation failed. After an error no more parts follow. */
  | { type: 'error'; error: ServiceError };

export type StreamPartType = StreamPart['type'];
