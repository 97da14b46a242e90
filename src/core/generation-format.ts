/**
 * The contract of a client wire format for text generation (chat completions, messages, responses):
 * decode a request body into the canonical request, encode the canonical result or stream back. Each
 * format folder exports one value implementing it; one route registration serves them all, and the
 * batch worker runs lines through the same values. Adding a format is a folder plus one line
 * (docs/adding-a-format.md).
 */
import type { GenerationResult } from './assemble-result.ts';
import type { GenerationRequest, GenerationSetting } from './generation.ts';
import type { SseEvent } from './sse-event.ts';
import type { StreamPart } from './stream-parts.ts';

/**
 * `spec` (default) applies every SPEC rule as written; `compatible` accepts what the upstream APIs
 * accept where the SPEC is stricter (README "Request validation" lists each relaxation).
 */
export type RequestValidation = 'spec' | 'compatible';

/** What every request decoder takes beside the body (config `requestValidation`). */
export interface DecodeOptions {
  validation: RequestValidation;
}

/** The options a decoder uses when the caller gives none: strict SPEC validation. */
export const SPEC_DECODE_OPTIONS: DecodeOptions = Object.freeze({ validation: 'spec' });

/** A decoded request: the canonical request plus what this format needs to answer it. */
export interface DecodedGeneration<Context> {
  request: GenerationRequest;
  /** The client asked for server-sent events. */
  stream: boolean;
  /**
   * Request field blamed in the 400 when the model lacks a capability, per capability, in this format's
   * words (e.g. `vision` -> `messages[0].content[1]`).
   */
  capabilityParams: Partial<Record<string, string>>;
  /** Wire names of valid parameters this service will not honour (decoder's own findings). */
  ignoredParameters: string[];
  /** Extra response headers this request earns (e.g. a deprecation warning). */
  headers: Record<string, string>;
  /** Whatever the encoders need: the echoed model, ids, stream options... */
  context: Context;
}

/** What is known once the generation has started, for encoders that show it early. */
export interface StartedGeneration {
  /** Prompt tokens counted locally (what was reserved). */
  promptTokens: number;
  /**
   * Called with the final answer object before the terminal event, for endpoints that store answers
   * (responses: `store: true`). Formats whose streams carry a final object call it; others ignore it.
   */
  onFinal?: (body: Record<string, unknown>) => Promise<void>;
}

/** What a format may read of the SPEC error envelope it wraps (http/error-envelope.ts renders it). */
export interface WrappableErrorEnvelope {
  error: { type: string };
  info_metadata: { request_id: string | null };
}

/**
 * A format's answer object as the JSON body the edge sends (it adds `_metadata` in place). A typed
 * interface has no index signature, so it is not a Record by type; copying it into one (`{ ...answer }`)
 * cost every JSON answer a clone.
 */
export function jsonBody(answer: object): Record<string, unknown> {
  return answer as Record<string, unknown>;
}

export interface GenerationFormat<Context> {
  /** Short name for logs and metrics (`openai-chat`, `anthropic-messages`, `openai-responses`). */
  readonly name: string;
  /** This format's wire name for each canonical setting, for the ignored-parameters header. */
  readonly settingNames: Readonly<Record<GenerationSetting, string>>;
  decode(body: unknown, options: DecodeOptions): DecodedGeneration<Context>;
  encodeResponse(result: GenerationResult, context: Context): Record<string, unknown>;
  /**
   * Encodes the committed stream. Parts arrive sequenced (the block rule, core/stream-parts.ts: no two blocks open at once). Once it has yielded,
   * failures must become this format's error event; before that they may be thrown (HTTP status).
   */
  encodeStream(parts: AsyncIterable<StreamPart>, context: Context, started: StartedGeneration): AsyncIterable<SseEvent>;
  /** Sent while a stream is silent; default an SSE comment. */
  readonly keepAlive?: SseEvent;
  /**
   * This format's clients' error body around the SPEC envelope (Anthropic clients read a top-level
   * `"type":"error"` and `request_id`); `status` is the HTTP status the body is answered with.
   */
  wrapErrorEnvelope?<Envelope extends WrappableErrorEnvelope>(envelope: Envelope, status: number): Envelope;
}
