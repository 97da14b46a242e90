/**
 * Decodes a `POST /v1/responses` body into the canonical GenerationRequest, the normalised input items
 * of this turn (stored, listed by `input_items`, prepended to later turns) and the echo fields of the
 * Response object.
 *
 * Wire document: docs/spec.md "Response request" (it wins: max_output_tokens required and >= 1, `max_tokens`
 * its deprecated alias, temperature 0.0-1.0 default 0.7, top_p 0.0-1.0, truncation default `disabled`,
 * metadata at most 16 pairs, store default true, reasoning.effort low|medium|high), docs/wire-contracts.md
 * "Responses" and the OpenAI OpenAPI `CreateResponse` / `ResponseInputItem` for what the SPEC leaves open.
 * With `requestValidation: compatible` (DecodeOptions) a missing max_output_tokens, temperature up to 2 and
 * reasoning.effort `minimal` are accepted, as OpenAI accepts them. `item_reference` items are accepted in
 * both modes and resolved by the endpoint (services/responses/prepare-turn.ts) among the organization's stored items.
 *
 * Code choice, as in the other decoders: a value of the wrong JSON type is `invalid_format`; the right
 * type with a value that is not allowed (range, enum, unsupported feature) is `invalid_parameter`; an
 * absent required field is `missing_parameter`; a malformed conversation (role, content part or item
 * kind, a function_call_output answering no function_call) is `invalid_messages`. `null` counts as
 * absent for optional fields. Unknown top-level fields are ignored (SDKs add new ones); fields whose
 * feature would change the answer and cannot be given (background mode, prompt templates, log
 * probabilities, conversation objects) are refused.
 */
import type { GenerationRequest } from '../../core/generation.ts';
import { invalidFormat, invalidParameter } from '../../core/service-error.ts';
import { maxTemperature, SPEC_DECODE_OPTIONS, type DecodeOptions } from '../shared/decode-options.ts';
import {
  describeType,
  isObject,
  optionalBoolean,
  optionalEnum,
  optionalMetadata,
  optionalNumberInRange,
  optionalString,
  requiredString,
  wrongType,
} from '../shared/request-fields.ts';
import { decodeInput, decodeInstructions } from './decode-input.ts';
import { firstImageParam, readConversation } from './decode-messages.ts';
import { decodeMaxOutputTokens, decodeReasoning, decodeText, decodeUnsupportedFeatures } from './decode-settings.ts';
import { decodeToolChoice, decodeTools } from './decode-tools.ts';
import type { DecodedResponsesRequest, PendingItemReference, ResponsesRequestOptions } from './decoded-request.ts';
import type { ResponseEcho } from './wire-types.ts';

export type { DecodedResponsesRequest, PendingItemReference, ResponsesRequestOptions };

/** SPEC default of `temperature` on the response-style endpoint. */
export const DEFAULT_TEMPERATURE = 0.7;

/**
 * Decodes and validates a response request body (already JSON-parsed).
 * Throws a 400 ServiceError with a precise `param` for any client mistake.
 */
export function decodeResponsesRequest(body: unknown, decodeOptions: DecodeOptions = SPEC_DECODE_OPTIONS): DecodedResponsesRequest {
  if (!isObject(body)) throw invalidFormat(null, `The request body must be a JSON object, but got ${describeType(body)} instead.`);

  const model = requiredString(body, 'model', 'model');
  if (model.length === 0) throw invalidParameter('model', "Invalid 'model': the model id must not be empty.");

  const { items: input, references: itemReferences } = decodeInput(body['input']);
  const ignoredParameters: string[] = [];

  const { maxOutputTokens, usedDeprecatedMaxTokens } = decodeMaxOutputTokens(body, decodeOptions);

  const { text: instructionsText, echo: instructionsEcho } = decodeInstructions(body['instructions']);
  const temperature = optionalNumberInRange(body, 'temperature', 0, maxTemperature(decodeOptions)) ?? DEFAULT_TEMPERATURE;
  const topP = optionalNumberInRange(body, 'top_p', 0, 1);
  const stream = optionalBoolean(body, 'stream') ?? false;
  const { definitions: tools, echo: toolsEcho } = decodeTools(body['tools']);
  const { choice: toolChoice, echo: toolChoiceEcho } = decodeToolChoice(body['tool_choice'], tools);
  const parallelToolCalls = optionalBoolean(body, 'parallel_tool_calls') ?? true;
  const truncation = optionalEnum(body, 'truncation', ['auto', 'disabled'] as const) ?? 'disabled';
  const user = optionalString(body, 'user');
  const metadata = optionalMetadata(body['metadata']) ?? {};
  const store = optionalBoolean(body, 'store') ?? true;
  const previousResponseId = optionalString(body, 'previous_response_id');
  if (previousResponseId !== undefined && previousResponseId.length === 0) {
    throw invalidParameter('previous_response_id', "Invalid 'previous_response_id': it must not be empty.");
  }
  const { format: responseFormat, echo: textEcho } = decodeText(body['text'], ignoredParameters);
  const reasoning = decodeReasoning(body['reasoning'], ignoredParameters, decodeOptions);
  decodeUnsupportedFeatures(body, ignoredParameters);

  const request: GenerationRequest = { model, messages: [], temperature, parallelToolCalls };
  if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens;
  if (topP !== undefined) request.topP = topP;
  if (tools.length > 0) request.tools = tools;
  if (toolChoice !== undefined) request.toolChoice = toolChoice;
  if (responseFormat !== undefined) request.responseFormat = responseFormat;
  if (reasoning.effort !== null) request.reasoningEffort = reasoning.effort === 'minimal' ? 'low' : reasoning.effort;
  if (user !== undefined) request.user = user;
  if (Object.keys(metadata).length > 0) request.metadata = metadata;

  const echo: ResponseEcho = {
    instructions: instructionsEcho,
    max_output_tokens: maxOutputTokens ?? null,
    parallel_tool_calls: parallelToolCalls,
    previous_response_id: previousResponseId ?? null,
    reasoning,
    store,
    temperature,
    text: textEcho,
    tool_choice: toolChoiceEcho,
    tools: toolsEcho,
    top_p: topP ?? 1,
    truncation,
    user: user ?? null,
    metadata,
  };
  const decoded: DecodedResponsesRequest = {
    request,
    input,
    options: {
      model,
      stream,
      store,
      previousResponseId: previousResponseId ?? null,
      truncation,
      maxOutputTokens,
      usedDeprecatedMaxTokens,
      instructionsText,
      ignoredParameters,
      // Set by readConversation below; with references pending, from the items given in full.
      imageParam: itemReferences.length > 0 ? firstImageParam(input) : null,
      echo,
    },
    itemReferences,
  };
  // With item references the conversation is read once they are placed (services/responses/prepare-turn.ts).
  if (itemReferences.length === 0) readConversation(decoded, null);
  return decoded;
}

/** Query of `GET /v1/responses/{id}/input_items`. */
export interface InputItemsQuery {
  /** Item id to list after (cursor), or null for the first page. */
  after: string | null;
  /** Page size, 1-100 (default 20). */
  limit: number;
  /** `desc` (default, OpenAI's) or `asc`. */
  order: 'asc' | 'desc';
}

/**
 * Decodes the query of `GET /v1/responses/{id}/input_items` (OpenAI OpenAPI `ListInputItems`: `after`,
 * `limit` 1-100 default 20, `order` asc|desc default desc; `include` is accepted and ignored).
 */
export function decodeInputItemsQuery(query: unknown): InputItemsQuery {
  const values = isObject(query) ? query : {};
  const result: InputItemsQuery = { after: null, limit: 20, order: 'desc' };
  const after = values['after'];
  if (after !== undefined) {
    if (typeof after !== 'string') throw wrongType('after', 'a string', after);
    if (after !== '') result.after = after;
  }
  const limit = values['limit'];
  if (limit !== undefined) {
    const text = String(limit);
    if (!/^-?\d+$/.test(text)) throw invalidFormat('limit', `Invalid 'limit': expected an integer from 1 to 100, got '${text}'.`);
    const parsed = Number(text);
    if (parsed < 1 || parsed > 100) throw invalidParameter('limit', `Invalid 'limit': ${parsed} is outside the range 1 to 100.`);
    result.limit = parsed;
  }
  const order = values['order'];
  if (order !== undefined) {
    if (order !== 'asc' && order !== 'desc')
      throw invalidParameter('order', `Invalid 'order': '${String(order)}' is not one of 'asc', 'desc'.`);
    result.order = order;
  }
  return result;
}
