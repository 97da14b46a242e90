/**
 * The shapes `decode-request.ts` produces: the decoded request, its options and the pending
 * `item_reference` items. Their own file, below the entry, so the helpers that fill them
 * (`decode-input.ts`, `decode-messages.ts`) depend on the shapes, not on the file that calls them.
 */
import type { GenerationRequest } from '../../core/generation.ts';
import type { ResponseEcho, ResponseItem } from './wire-types.ts';

/** What the route, the store and the encoders need besides the canonical request. */
export interface ResponsesRequestOptions {
  /** The `model` string exactly as the client sent it (echoed in the Response object). */
  model: string;
  /** `stream: true`: answer with server-sent events. */
  stream: boolean;
  /** `store` (default true): persist the response and its input for `previous_response_id` and retrieval. */
  store: boolean;
  /** The response this one continues, or null. Its chain is loaded by the endpoint (services/responses/prepare-turn.ts). */
  previousResponseId: string | null;
  truncation: 'auto' | 'disabled';
  /**
   * `max_output_tokens` (or its deprecated alias), tokens, >= 1. Undefined only in `compatible`
   * validation when the client named no maximum: the generation reserves and caps as chat completions do.
   */
  maxOutputTokens: number | undefined;
  /** True when the client used the deprecated `max_tokens` spelling (the route adds a warning header). */
  usedDeprecatedMaxTokens: boolean;
  /** `instructions` joined into one text, or null. Never carried over to later turns. */
  instructionsText: string | null;
  /** Wire names of valid parameters that will not be honoured, for a warning header. Empty when all are. */
  ignoredParameters: string[];
  /** Path of this turn's first image (`input[1].content[0]`), to blame when the model lacks vision; null without images. */
  imageParam: string | null;
  /** The request fields the Response object echoes. */
  echo: ResponseEcho;
}

export interface DecodedResponsesRequest {
  /**
   * The canonical request. Without `previous_response_id` it is complete; with it, the stored chain must
   * be read in (`readConversation(decoded, history)`) before generation (until then `messages` holds this
   * turn's input only).
   */
  request: GenerationRequest;
  /** This turn's input items, normalised, each with an id (`msg_...`, `fc_...`, `fco_...`, `rs_...`). */
  input: ResponseItem[];
  options: ResponsesRequestOptions;
  /**
   * `item_reference` input items, in input order, still to be looked up among the organization's stored
   * items and placed (services/responses/prepare-turn.ts) before anything else runs. While any are pending,
   * `input` lacks them and `request.messages` is empty. Empty when the input has none.
   */
  itemReferences: PendingItemReference[];
}

/** One `{"type": "item_reference", "id": ...}` input item. */
export interface PendingItemReference {
  /** Its position in the wire `input` array. */
  index: number;
  /** The referenced item's id (`msg_...`, `fc_...`, `rs_...`). */
  id: string;
  /** `input[2].id`: the param a 400 names when the id resolves to nothing. */
  param: string;
}
