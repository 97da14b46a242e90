/**
 * Fits a canonical request into a model's context window, for the response-style `truncation`
 * parameter (SPEC "Response request": `auto` or `disabled`, default `disabled`).
 *
 * The prompt is estimated with core/count-tokens.ts (the o200k encoding) and must leave room for
 * `max_output_tokens`: countRequestTokens(request) + maxOutputTokens <= contextWindow.
 * - `disabled`: a request that does not fit is a 400 `invalid_parameter` with param `input`.
 * - `auto`: whole turns are dropped from the oldest on (a turn starts at a user message and runs to the
 *   next one, so a tool call is never separated from its result) until the request fits; the last user
 *   turn is always kept. If even that does not fit, the same 400 as `disabled`.
 * The system text (instructions) is never dropped.
 */
import { countRequestTokens } from '../../core/count-tokens.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import { invalidParameter } from '../../core/service-error.ts';

export interface TruncationOptions {
  truncation: 'auto' | 'disabled';
  /** The model's context window (ModelConfig.contextWindow), tokens: prompt + completion. */
  contextWindow: number;
  /**
   * Tokens reserved for the answer (`max_output_tokens`). Undefined when the client named no maximum
   * (`requestValidation: compatible`): the prompt alone must fit, and the answer is capped by what is left,
   * as on chat completions.
   */
  maxOutputTokens: number | undefined;
}

export interface TruncationOutcome {
  /** Canonical messages dropped from the start of the conversation (0 when it fitted). */
  droppedMessages: number;
  /** Estimated prompt tokens of the request as it will be sent. */
  promptTokens: number;
}

/** Checks (and with `auto`, shortens in place) `request.messages`; see the header for the rules. */
export function fitContextWindow(request: GenerationRequest, options: TruncationOptions): TruncationOutcome {
  const { contextWindow } = options;
  const maxOutputTokens = options.maxOutputTokens ?? 0;
  if (options.maxOutputTokens !== undefined && maxOutputTokens >= contextWindow) {
    throw invalidParameter(
      'max_output_tokens',
      `Invalid 'max_output_tokens': ${maxOutputTokens} leaves no room for the input in the context window of '${request.model}' (${contextWindow} tokens). Lower 'max_output_tokens'.`,
    );
  }
  const budget = contextWindow - maxOutputTokens;
  const promptTokens = countRequestTokens(request);
  if (promptTokens <= budget) return { droppedMessages: 0, promptTokens };

  if (options.truncation === 'auto') {
    // Token cost of each message alone (the request's fixed part counted once), so each cut is O(1).
    const fixedTokens = countRequestTokens({ ...request, messages: [] });
    const messageTokens = request.messages.map(
      (message) =>
        countRequestTokens({ model: request.model, messages: [message] }) - countRequestTokens({ model: request.model, messages: [] }),
    );
    let lastUser = -1;
    request.messages.forEach((message, index) => {
      if (message.role === 'user') lastUser = index;
    });
    let remaining = messageTokens.reduce((sum, tokens) => sum + tokens, 0);
    for (let cut = 1; cut <= lastUser; cut++) {
      remaining -= messageTokens[cut - 1]!;
      if (request.messages[cut]!.role !== 'user') continue;
      if (fixedTokens + remaining <= budget) {
        request.messages = request.messages.slice(cut);
        return { droppedMessages: cut, promptTokens: fixedTokens + remaining };
      }
    }
  }
  const advice =
    options.truncation === 'auto'
      ? "Even the last user turn alone is too long: shorten it, or lower 'max_output_tokens'."
      : "Shorten the input, lower 'max_output_tokens', or set 'truncation' to 'auto' to drop the oldest turns.";
  const reserved = options.maxOutputTokens === undefined ? '' : ` plus max_output_tokens ${maxOutputTokens}`;
  throw invalidParameter(
    'input',
    `The input is too long for model '${request.model}': about ${promptTokens} prompt tokens${reserved} exceed its context window of ${contextWindow} tokens. ${advice}`,
  );
}
