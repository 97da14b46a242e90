/**
 * The response-style endpoint's own steps, run once the model is known and before capabilities and
 * limits are checked (the endpoint's `prepare`, routes/generation-endpoints.ts): put back the stored
 * items of `item_reference` inputs, read in the stored chain of `previous_response_id` (its instructions
 * are not carried over), map `reasoning.effort` to a thinking budget, and fit the context window
 * (`truncation`, truncate-conversation.ts).
 *
 * Nothing here knows the wire format: the decoded request is a `ResponseTurn<Item>` (formats/openai-responses
 * `DecodedResponsesRequest` is one), and turning items into canonical messages is the format's
 * `readConversation`, handed in by the caller.
 */
import type { GenerationRequest } from '../../core/generation.ts';
import { invalidParameter } from '../../core/service-error.ts';
import { fitContextWindow } from './truncate-conversation.ts';

/** Reasoning effort -> thinking budget, tokens (capped below max_output_tokens by applyReasoningBudget). */
export const REASONING_BUDGET_TOKENS = { low: 1024, medium: 4096, high: 16384 } as const;
/** The smallest thinking budget backends accept (Anthropic's minimum), tokens. */
export const MIN_THINKING_BUDGET_TOKENS = 1024;

/** One `{"type": "item_reference", "id": ...}` input item still to be looked up. */
export interface ItemReference {
  /** Its position in the wire `input` array. */
  index: number;
  /** The referenced item's id (`msg_...`, `fc_...`, `rs_...`). */
  id: string;
  /** `input[2].id`: the param a 400 names when the id resolves to nothing. */
  param: string;
}

/** What these steps read and complete of a decoded response request. */
export interface ResponseTurn<Item> {
  request: GenerationRequest;
  /** This turn's input items, in input order (without the pending references). */
  input: Item[];
  /** `item_reference` inputs still to be placed; empty once placed. */
  itemReferences: ItemReference[];
  options: {
    previousResponseId: string | null;
    truncation: 'auto' | 'disabled';
    maxOutputTokens: number | undefined;
  };
}

/**
 * The format's reading of a turn's items as the canonical conversation (`request.messages` and
 * `request.system`): `history` (the stored chain, oldest first) then this turn's input; null: no chain.
 */
export type ReadConversation<Item, Turn extends ResponseTurn<Item>> = (turn: Turn, history: readonly Item[] | null) => void;

/** Where the steps look things up: `StoredResponses` (stored-responses.ts) is one. */
export interface ConversationStore<Item> {
  findItems(ids: readonly string[], organizationId: string): Promise<ReadonlyMap<string, Item>>;
  loadHistory(previousResponseId: string, organizationId: string): Promise<Item[]>;
}

export interface PrepareTurnOptions<Item, Turn extends ResponseTurn<Item>> {
  store: ConversationStore<Item>;
  /** The caller's organization: stored items and chains are visible to it only. */
  organizationId: string;
  model: { capabilities: readonly string[]; contextWindow: number };
  readConversation: ReadConversation<Item, Turn>;
}

/** Runs the steps of the header, in order, on `turn` (in place). */
export async function prepareResponseTurn<Item, Turn extends ResponseTurn<Item>>(
  turn: Turn,
  options: PrepareTurnOptions<Item, Turn>,
): Promise<void> {
  const { store, organizationId } = options;
  if (turn.itemReferences.length > 0) {
    const found = await store.findItems(
      turn.itemReferences.map((reference) => reference.id),
      organizationId,
    );
    resolveItemReferences(turn, found, options.readConversation);
  }
  const previousResponseId = turn.options.previousResponseId;
  if (previousResponseId !== null) options.readConversation(turn, await store.loadHistory(previousResponseId, organizationId));
  applyReasoningBudget(turn.request, options.model.capabilities.includes('thinking'));
  fitContextWindow(turn.request, {
    truncation: turn.options.truncation,
    contextWindow: options.model.contextWindow,
    maxOutputTokens: turn.options.maxOutputTokens,
  });
}

/**
 * Places the items that `turn.itemReferences` name (looked up by the caller among its organization's
 * stored items: `found` maps id -> item) at their input positions and reads the conversation. An id
 * missing from `found` (unknown, or another organization's) is a 400 `invalid_parameter` naming
 * `input[i].id`. A no-op without references; runs before the stored chain is read in.
 */
export function resolveItemReferences<Item, Turn extends ResponseTurn<Item>>(
  turn: Turn,
  found: ReadonlyMap<string, Item>,
  readConversation: ReadConversation<Item, Turn>,
): void {
  if (turn.itemReferences.length === 0) return;
  const input = [...turn.input];
  for (const reference of turn.itemReferences) {
    const item = found.get(reference.id);
    if (item === undefined) {
      throw invalidParameter(
        reference.param,
        `Invalid '${reference.param}': no stored item with id '${reference.id}' was found. Items can be referenced only from responses your organization created with 'store: true'.`,
      );
    }
    input.splice(reference.index, 0, item);
  }
  turn.input = input;
  turn.itemReferences = [];
  readConversation(turn, null);
}

/**
 * Maps `reasoning.effort` to a thinking budget (REASONING_BUDGET_TOKENS, capped below
 * max_output_tokens) when the model has the `thinking` capability; a cap below the backends' minimum
 * budget of 1024 tokens leaves only `reasoningEffort`. Without the capability the request keeps
 * `reasoningEffort` alone (for backends that take an effort).
 */
export function applyReasoningBudget(request: GenerationRequest, thinkingCapable: boolean): void {
  if (!thinkingCapable || request.reasoningEffort === undefined) return;
  const wanted = REASONING_BUDGET_TOKENS[request.reasoningEffort];
  const budget = request.maxOutputTokens === undefined ? wanted : Math.min(wanted, request.maxOutputTokens - 1);
  if (budget >= MIN_THINKING_BUDGET_TOKENS) request.thinking = { budgetTokens: budget };
}
