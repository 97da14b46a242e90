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
 * both modes and resolved by the route (`resolveItemReferences`) among the organization's stored items.
 *
 * Code choice, as in the other decoders: a value of the wrong JSON type is `invalid_format`; the right
 * type with a value that is not allowed (range, enum, unsupported feature) is `invalid_parameter`; an
 * absent required field is `missing_parameter`; a malformed conversation (role, content part or item
 * kind, a function_call_output answering no function_call) is `invalid_messages`. `null` counts as
 * absent for optional fields. Unknown top-level fields are ignored (SDKs add new ones); fields whose
 * feature would change the answer and cannot be given (background mode, prompt templates, log
 * probabilities, conversation objects) are refused.
 */
import type {
  AssistantContentPart,
  DocumentPart,
  GenerationRequest,
  ImagePart,
  Message,
  ResponseFormat,
  TextPart,
  ToolChoice,
  ToolDefinition,
  ToolResultPart,
  UserContentPart,
} from '../../core/generation.ts';
import { newId, randomHex } from '../../core/ids.ts';
import { invalidFormat, invalidMessages, invalidParameter, missingParameter } from '../../core/service-error.ts';
import type {
  FunctionCallItem,
  FunctionCallOutputItem,
  FunctionToolEcho,
  InputContent,
  InputImageContent,
  InputMessageItem,
  InputTextContent,
  InstructionMessageEcho,
  ItemStatus,
  OutputMessageItem,
  ReasoningItem,
  ResponseEcho,
  ResponseItem,
  TextConfigEcho,
  TextFormatEcho,
  ToolChoiceEcho,
} from './wire-types.ts';
import {
  isObject,
  describeType,
  wrongType,
  expectObject,
  requiredString,
  optionalString,
  optionalArray,
  optionalBoolean,
  optionalNumberInRange,
  optionalInteger,
  optionalPositiveInteger,
  optionalEnum,
  parseDataUrl,
  isHttpUrl,
  type JsonObject,
  optionalMetadata,
} from '../shared/request-fields.ts';
import { maxTemperature, SPEC_DECODE_OPTIONS, type DecodeOptions } from '../shared/decode-options.ts';

/** What the route, the store and the encoders need besides the canonical request. */
export interface ResponsesRequestOptions {
  /** The `model` string exactly as the client sent it (echoed in the Response object). */
  model: string;
  /** `stream: true`: answer with server-sent events. */
  stream: boolean;
  /** `store` (default true): persist the response and its input for `previous_response_id` and retrieval. */
  store: boolean;
  /** The response this one continues, or null. Its chain must be loaded with `applyHistory`. */
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
   * The canonical request. Without `previous_response_id` it is complete; with it, `applyHistory` must
   * run before generation (until then `messages` holds this turn's input only).
   */
  request: GenerationRequest;
  /** This turn's input items, normalised, each with an id (`msg_...`, `fc_...`, `fco_...`, `rs_...`). */
  input: ResponseItem[];
  options: ResponsesRequestOptions;
  /**
   * `item_reference` input items, in input order, still to be looked up among the organization's stored
   * items and placed with `resolveItemReferences` before anything else runs. While any are pending,
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

/** Reasoning effort -> thinking budget, tokens (capped below max_output_tokens by applyReasoningBudget). */
export const REASONING_BUDGET_TOKENS = { low: 1024, medium: 4096, high: 16384 } as const;
/** The smallest thinking budget backends accept (Anthropic's minimum), tokens. */
export const MIN_THINKING_BUDGET_TOKENS = 1024;

/** OpenAI function and json_schema names: `^[a-zA-Z0-9_-]{1,64}$`. */
const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
/** SPEC "Limits": response-style metadata, at most 16 pairs; OpenAI's key and value lengths. */
const MESSAGE_ROLES = ['user', 'assistant', 'system', 'developer'] as const;
const REASONING_EFFORTS = ['low', 'medium', 'high'] as const;
/** `compatible` validation also takes OpenAI's `minimal` (accepted on chat completions), generated as `low`. */
const COMPATIBLE_REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
const REASONING_SUMMARIES = ['auto', 'concise', 'detailed'] as const;
const ITEM_STATUSES = ['in_progress', 'completed', 'incomplete'] as const;
const IMAGE_DETAILS = ['auto', 'low', 'high', 'original'] as const;
/** Prefix of `encrypted_content` that carries redacted reasoning rather than a signature. */
export const REDACTED_REASONING_PREFIX = 'redacted:';
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

  // SPEC: max_output_tokens is required (>= 1); `max_tokens` is its deprecated alias.
  const maxOutputTokensValue = optionalPositiveInteger(body, 'max_output_tokens');
  const maxTokensValue = optionalPositiveInteger(body, 'max_tokens');
  if (maxOutputTokensValue !== undefined && maxTokensValue !== undefined && maxOutputTokensValue !== maxTokensValue) {
    throw invalidParameter(
      'max_tokens',
      "Invalid 'max_tokens': it differs from 'max_output_tokens'. Send only 'max_output_tokens' ('max_tokens' is its deprecated alias).",
    );
  }
  const maxOutputTokens = maxOutputTokensValue ?? maxTokensValue;
  // `compatible`: a missing maximum reserves and caps like chat completions (the model's own maximum).
  if (maxOutputTokens === undefined && decodeOptions.validation === 'spec') {
    throw missingParameter(
      'max_output_tokens',
      "Missing required parameter: 'max_output_tokens' (an integer >= 1, the most tokens the response may contain).",
    );
  }
  const usedDeprecatedMaxTokens = maxOutputTokensValue === undefined && maxTokensValue !== undefined;

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

  // With item references the conversation is built once they are resolved (resolveItemReferences).
  const conversation: Conversation =
    itemReferences.length > 0
      ? { messages: [] }
      : buildConversation(
          input.map((item, index) => ({ item, param: `input[${index}]` })),
          instructionsText,
          // With previous_response_id, call ids may answer calls of the stored chain: checked by applyHistory.
          previousResponseId === undefined,
        );

  const request: GenerationRequest = { model, messages: conversation.messages, temperature, parallelToolCalls };
  if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens;
  if (conversation.system !== undefined) request.system = conversation.system;
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
  return {
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
      imageParam: firstImageParam(input),
      echo,
    },
    itemReferences,
  };
}

/**
 * Places the items that `decoded.itemReferences` name (looked up by the caller among its organization's
 * stored items: `found` maps id -> item) at their input positions and builds the conversation. An id
 * missing from `found` (unknown, or another organization's) is a 400 `invalid_parameter` naming
 * `input[i].id`. A no-op without references; run it before `applyHistory`.
 */
export function resolveItemReferences(decoded: DecodedResponsesRequest, found: ReadonlyMap<string, ResponseItem>): void {
  if (decoded.itemReferences.length === 0) return;
  const input = [...decoded.input];
  for (const reference of decoded.itemReferences) {
    const item = found.get(reference.id);
    if (item === undefined) {
      throw invalidParameter(
        reference.param,
        `Invalid '${reference.param}': no stored item with id '${reference.id}' was found. Items can be referenced only from responses your organization created with 'store: true'.`,
      );
    }
    input.splice(reference.index, 0, item);
  }
  decoded.input = input;
  decoded.itemReferences = [];
  const conversation = buildConversation(
    input.map((item, index) => ({ item, param: `input[${index}]` })),
    decoded.options.instructionsText,
    decoded.options.previousResponseId === null,
  );
  decoded.request.messages = conversation.messages;
  if (conversation.system === undefined) delete decoded.request.system;
  else decoded.request.system = conversation.system;
  decoded.options.imageParam = firstImageParam(input);
}

function firstImageParam(input: readonly ResponseItem[]): string | null {
  for (const [index, item] of input.entries()) {
    if (item.type === 'message' && item.role !== 'assistant') {
      const partIndex = item.content.findIndex((part) => part.type === 'input_image');
      if (partIndex >= 0) return `input[${index}].content[${partIndex}]`;
    } else if (item.type === 'function_call_output' && typeof item.output !== 'string') {
      const partIndex = item.output.findIndex((part) => part.type === 'input_image');
      if (partIndex >= 0) return `input[${index}].output[${partIndex}]`;
    }
  }
  return null;
}

/**
 * Prepends the items of the stored chain (every earlier turn's input items then output items, oldest
 * first, as `services/responses` loads them) to this turn's input and rebuilds `request.messages` and
 * `request.system`. Earlier turns' `instructions` are not part of `history` and are not carried over
 * (docs/wire-contracts.md "previous_response_id"); their system/developer input messages are.
 * Throws 400 `invalid_messages` when a function_call_output of this turn answers no function_call of
 * the chain, or a function call of the chain is left unanswered.
 */
export function applyHistory(decoded: DecodedResponsesRequest, history: readonly ResponseItem[]): void {
  const conversation = buildConversation(
    [...history.map((item) => ({ item, param: null })), ...decoded.input.map((item, index) => ({ item, param: `input[${index}]` }))],
    decoded.options.instructionsText,
    true,
  );
  decoded.request.messages = conversation.messages;
  if (conversation.system === undefined) delete decoded.request.system;
  else decoded.request.system = conversation.system;
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

// ---------------------------------------------------------------------------------------------------
// Input items

/** The decoded input: the items given in full, and the references (with their positions) to resolve. */
function decodeInput(value: unknown): { items: ResponseItem[]; references: PendingItemReference[] } {
  if (value === undefined || value === null)
    throw missingParameter('input', "Missing required parameter: 'input' (a string or an array of input items).");
  if (typeof value === 'string') {
    if (value.length === 0) throw invalidParameter('input', "Invalid 'input': the input text must not be empty.");
    return {
      items: [
        {
          id: newId.responseMessageItem(),
          type: 'message',
          role: 'user',
          status: 'completed',
          content: [{ type: 'input_text', text: value }],
        },
      ],
      references: [],
    };
  }
  if (!Array.isArray(value)) throw wrongType('input', 'a string or an array of input items', value);
  if (value.length === 0) throw invalidParameter('input', "Invalid 'input': the array must contain at least one item.");
  const items: ResponseItem[] = [];
  const references: PendingItemReference[] = [];
  value.forEach((entry, index) => {
    const param = `input[${index}]`;
    const reference = decodeItemReference(entry, param);
    if (reference === undefined) items.push(decodeItem(entry, param));
    else references.push({ index, id: reference, param: `${param}.id` });
  });
  return { items, references };
}

/** The id of an `{"type": "item_reference", "id": ...}` item; undefined for any other item. */
function decodeItemReference(value: unknown, param: string): string | undefined {
  if (!isObject(value) || value['type'] !== 'item_reference') return undefined;
  const id = requiredString(value, 'id', `${param}.id`);
  if (id.length === 0) throw invalidParameter(`${param}.id`, `Invalid '${param}.id': the item id must not be empty.`);
  return id;
}

function decodeItem(value: unknown, param: string): ResponseItem {
  const item = expectObject(value, param);
  const type = optionalString(item, 'type', `${param}.type`);
  // An item without `type` but with `role` is a message (the SDK's EasyInputMessage).
  if (type === undefined) {
    if (item['role'] === undefined || item['role'] === null) throw missingParameter(`${param}.type`);
    return decodeMessageItem(item, param);
  }
  switch (type) {
    case 'message':
      return decodeMessageItem(item, param);
    case 'function_call':
      return decodeFunctionCallItem(item, param);
    case 'function_call_output':
      return decodeFunctionCallOutputItem(item, param);
    case 'reasoning':
      return decodeReasoningItem(item, param);
    default:
      throw invalidMessages(
        `${param}.type`,
        `Invalid '${param}.type': '${type}' items are not supported by this service; input items are 'message', 'function_call', 'function_call_output', 'reasoning' and 'item_reference'.`,
      );
  }
}

function itemId(item: JsonObject, param: string, create: () => string): string {
  const id = optionalString(item, 'id', `${param}.id`);
  return id === undefined || id.length === 0 ? create() : id;
}

function itemStatus(item: JsonObject, param: string): ItemStatus {
  return optionalEnum(item, 'status', ITEM_STATUSES, `${param}.status`) ?? 'completed';
}

function decodeMessageItem(item: JsonObject, param: string): InputMessageItem | OutputMessageItem {
  const roleValue = item['role'];
  if (roleValue === undefined || roleValue === null) throw missingParameter(`${param}.role`);
  if (typeof roleValue !== 'string') throw wrongType(`${param}.role`, 'a string', roleValue);
  if (!(MESSAGE_ROLES as readonly string[]).includes(roleValue)) {
    throw invalidMessages(
      `${param}.role`,
      `Invalid '${param}.role': '${roleValue}' is not one of 'user', 'assistant', 'system', 'developer'.`,
    );
  }
  const role = roleValue as (typeof MESSAGE_ROLES)[number];
  const content = item['content'];
  if (content === undefined || content === null) throw missingParameter(`${param}.content`);
  if (typeof content !== 'string' && !Array.isArray(content))
    throw wrongType(`${param}.content`, 'a string or an array of content parts', content);
  if (Array.isArray(content) && content.length === 0)
    throw invalidMessages(`${param}.content`, `Invalid '${param}.content': a message needs at least one content part.`);

  if (role === 'assistant') {
    const parts: OutputMessageItem['content'] =
      typeof content === 'string'
        ? [{ type: 'output_text', text: content, annotations: [] }]
        : content.map((part, index) => decodeAssistantPart(part, `${param}.content[${index}]`));
    return { id: itemId(item, param, newId.responseMessageItem), type: 'message', role, status: itemStatus(item, param), content: parts };
  }
  const parts: InputContent[] =
    typeof content === 'string'
      ? [{ type: 'input_text', text: content }]
      : content.map((part, index) => decodeInputPart(part, `${param}.content[${index}]`, role === 'user'));
  return { id: itemId(item, param, newId.responseMessageItem), type: 'message', role, status: 'completed', content: parts };
}

function decodeAssistantPart(value: unknown, param: string): OutputMessageItem['content'][number] {
  const part = expectObject(value, param);
  const type = requiredString(part, 'type', `${param}.type`);
  if (type === 'output_text') return { type: 'output_text', text: requiredString(part, 'text', `${param}.text`), annotations: [] };
  if (type === 'refusal') return { type: 'refusal', refusal: requiredString(part, 'refusal', `${param}.refusal`) };
  throw invalidMessages(`${param}.type`, `Invalid '${param}.type': assistant message parts are 'output_text' or 'refusal', got '${type}'.`);
}

/** A part of a user (any kind) or system/developer (text only) message. */
function decodeInputPart(value: unknown, param: string, mediaAllowed: boolean): InputContent {
  const part = expectObject(value, param);
  const type = requiredString(part, 'type', `${param}.type`);
  if (type === 'input_text') return { type: 'input_text', text: requiredString(part, 'text', `${param}.text`) };
  if (type === 'input_image' || type === 'input_file') {
    if (!mediaAllowed)
      throw invalidMessages(
        `${param}.type`,
        `Invalid '${param}.type': system and developer messages take only 'input_text' parts, got '${type}'.`,
      );
    return type === 'input_image' ? decodeImagePart(part, param) : decodeFilePart(part, param);
  }
  const expected = mediaAllowed ? "'input_text', 'input_image' or 'input_file'" : "'input_text'";
  throw invalidMessages(`${param}.type`, `Invalid '${param}.type': '${type}' is not an input content part; expected ${expected}.`);
}

function decodeImagePart(part: JsonObject, param: string): InputImageContent {
  const url = optionalString(part, 'image_url', `${param}.image_url`);
  if (url === undefined) {
    if (part['file_id'] !== undefined && part['file_id'] !== null) {
      throw invalidParameter(
        `${param}.file_id`,
        `Invalid '${param}.file_id': images by file id are not supported; send 'image_url' with an http(s) URL or a base64 'data:image/...;base64,' URL.`,
      );
    }
    throw missingParameter(`${param}.image_url`);
  }
  const dataUrl = parseDataUrl(url);
  if (url.startsWith('data:')) {
    if (dataUrl === undefined || !dataUrl.mediaType.startsWith('image/')) {
      throw invalidParameter(
        `${param}.image_url`,
        `Invalid '${param}.image_url': expected a base64 image data URL such as 'data:image/png;base64,...'.`,
      );
    }
  } else if (!isHttpUrl(url)) {
    throw invalidParameter(
      `${param}.image_url`,
      `Invalid '${param}.image_url': expected an http(s) URL or a base64 'data:image/...;base64,' URL.`,
    );
  }
  const detail = optionalEnum(part, 'detail', IMAGE_DETAILS, `${param}.detail`) ?? 'auto';
  return { type: 'input_image', image_url: url, detail };
}

function decodeFilePart(part: JsonObject, param: string): InputContent {
  const fileData = optionalString(part, 'file_data', `${param}.file_data`);
  const fileUrl = optionalString(part, 'file_url', `${param}.file_url`);
  const filename = optionalString(part, 'filename', `${param}.filename`);
  if (fileData === undefined && fileUrl === undefined) {
    if (part['file_id'] !== undefined && part['file_id'] !== null) {
      throw invalidParameter(
        `${param}.file_id`,
        `Invalid '${param}.file_id': files by id are not supported in input; send 'file_data' (a base64 data URL) or 'file_url'.`,
      );
    }
    throw missingParameter(`${param}.file_data`, `Missing required parameter: '${param}.file_data' (or '${param}.file_url').`);
  }
  if (fileData !== undefined && parseDataUrl(fileData) === undefined) {
    throw invalidParameter(
      `${param}.file_data`,
      `Invalid '${param}.file_data': expected a base64 data URL such as 'data:application/pdf;base64,...'.`,
    );
  }
  if (fileUrl !== undefined && !isHttpUrl(fileUrl))
    throw invalidParameter(`${param}.file_url`, `Invalid '${param}.file_url': expected an http(s) URL.`);
  const result: InputContent = { type: 'input_file' };
  if (fileData !== undefined) result.file_data = fileData;
  else if (fileUrl !== undefined) result.file_url = fileUrl;
  if (filename !== undefined) result.filename = filename;
  return result;
}

function decodeFunctionCallItem(item: JsonObject, param: string): FunctionCallItem {
  const callId = requiredString(item, 'call_id', `${param}.call_id`);
  if (callId.length === 0) throw invalidParameter(`${param}.call_id`, `Invalid '${param}.call_id': the call id must not be empty.`);
  const name = requiredString(item, 'name', `${param}.name`);
  if (name.length === 0) throw invalidParameter(`${param}.name`, `Invalid '${param}.name': the function name must not be empty.`);
  // Arguments are kept verbatim: models sometimes produce invalid JSON, and clients send it back as is.
  const args = requiredString(item, 'arguments', `${param}.arguments`);
  return {
    id: itemId(item, param, newId.responseFunctionCallItem),
    type: 'function_call',
    call_id: callId,
    name,
    arguments: args,
    status: itemStatus(item, param),
  };
}

function decodeFunctionCallOutputItem(item: JsonObject, param: string): FunctionCallOutputItem {
  const callId = requiredString(item, 'call_id', `${param}.call_id`);
  if (callId.length === 0) throw invalidParameter(`${param}.call_id`, `Invalid '${param}.call_id': the call id must not be empty.`);
  const outputValue = item['output'];
  if (outputValue === undefined || outputValue === null) throw missingParameter(`${param}.output`);
  let output: FunctionCallOutputItem['output'];
  if (typeof outputValue === 'string') output = outputValue;
  else if (Array.isArray(outputValue)) {
    output = outputValue.map((value, index): InputTextContent | InputImageContent => {
      const partParam = `${param}.output[${index}]`;
      const part = expectObject(value, partParam);
      const type = requiredString(part, 'type', `${partParam}.type`);
      if (type === 'input_text') return { type: 'input_text', text: requiredString(part, 'text', `${partParam}.text`) };
      if (type === 'input_image') return decodeImagePart(part, partParam);
      throw invalidMessages(
        `${partParam}.type`,
        `Invalid '${partParam}.type': function call output parts are 'input_text' or 'input_image', got '${type}'.`,
      );
    });
  } else throw wrongType(`${param}.output`, 'a string or an array of content parts', outputValue);
  return {
    id: itemId(item, param, () => `fco_${randomHex(48)}`),
    type: 'function_call_output',
    call_id: callId,
    output,
    status: 'completed',
  };
}

function decodeReasoningItem(item: JsonObject, param: string): ReasoningItem {
  const summary = optionalArray(item, 'summary', `${param}.summary`).map((value, index) => {
    const partParam = `${param}.summary[${index}]`;
    const part = expectObject(value, partParam);
    return { type: 'summary_text' as const, text: requiredString(part, 'text', `${partParam}.text`) };
  });
  const content = optionalArray(item, 'content', `${param}.content`).map((value, index) => {
    const partParam = `${param}.content[${index}]`;
    const part = expectObject(value, partParam);
    const type = requiredString(part, 'type', `${partParam}.type`);
    if (type !== 'reasoning_text')
      throw invalidMessages(
        `${partParam}.type`,
        `Invalid '${partParam}.type': reasoning content parts are 'reasoning_text', got '${type}'.`,
      );
    return { type: 'reasoning_text' as const, text: requiredString(part, 'text', `${partParam}.text`) };
  });
  const encryptedContent = optionalString(item, 'encrypted_content', `${param}.encrypted_content`) ?? null;
  return {
    id: itemId(item, param, newId.responseReasoningItem),
    type: 'reasoning',
    summary,
    content,
    encrypted_content: encryptedContent,
    status: itemStatus(item, param),
  };
}

// ---------------------------------------------------------------------------------------------------
// Items -> canonical messages

interface PlacedItem {
  item: ResponseItem;
  /** `input[i]` for this turn's items; null for items of the stored chain. */
  param: string | null;
}

interface Conversation {
  system?: string;
  messages: Message[];
}

/**
 * Folds items into canonical messages: system/developer messages join the system text (after the
 * instructions); consecutive assistant-side items (assistant messages, reasoning, function calls) make
 * one assistant turn; consecutive function_call_output items make one tool turn. With `checkCalls`, every
 * function_call_output must answer an earlier, unanswered function_call, and every function call must be
 * answered before the next user or assistant turn and by the end.
 */
function buildConversation(items: readonly PlacedItem[], instructionsText: string | null, checkCalls: boolean): Conversation {
  const systemTexts: string[] = instructionsText === null ? [] : [instructionsText];
  const messages: Message[] = [];
  const known = new Map<string, string>();
  const pending = new Map<string, string>();

  const requireAnswered = (param: string): void => {
    if (!checkCalls || pending.size === 0) return;
    const [callId, name] = [...pending][0]!;
    throw invalidMessages(
      param,
      `No function_call_output found for the function call '${callId}' (${name}). Every function_call must be answered by a function_call_output item (with its call_id) before the conversation goes on.`,
    );
  };
  const assistantTurn = (param: string): AssistantContentPart[] => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last.content;
    requireAnswered(param);
    const created: Message = { role: 'assistant', content: [] };
    messages.push(created);
    return created.content;
  };

  for (const { item, param } of items) {
    const where = param ?? 'previous_response_id';
    switch (item.type) {
      case 'message':
        if (item.role === 'assistant') {
          const parts = item.content.map((part): TextPart => ({
            type: 'text',
            text: part.type === 'output_text' ? part.text : part.refusal,
          }));
          if (parts.length > 0) assistantTurn(where).push(...parts);
        } else if (item.role === 'user') {
          requireAnswered(where);
          messages.push({ role: 'user', content: item.content.map(toUserPart) });
        } else {
          systemTexts.push(item.content.map((part) => (part.type === 'input_text' ? part.text : '')).join('\n'));
        }
        break;
      case 'reasoning': {
        const text = item.content.map((part) => part.text).join('');
        const reasoning: AssistantContentPart = { type: 'reasoning', text };
        if (item.encrypted_content !== null && item.encrypted_content.startsWith(REDACTED_REASONING_PREFIX)) {
          reasoning.redactedData = item.encrypted_content.slice(REDACTED_REASONING_PREFIX.length);
        } else if (item.encrypted_content !== null && item.encrypted_content.length > 0) {
          reasoning.signature = item.encrypted_content;
        }
        // A reasoning item with neither text nor backend data says nothing a backend could use.
        if (text.length > 0 || reasoning.signature !== undefined || reasoning.redactedData !== undefined)
          assistantTurn(where).push(reasoning);
        break;
      }
      case 'function_call':
        if (checkCalls && known.has(item.call_id)) {
          const callParam = param === null ? where : `${param}.call_id`;
          throw invalidMessages(callParam, `Invalid '${callParam}': the call id '${item.call_id}' is used by two function calls.`);
        }
        assistantTurn(where).push({ type: 'tool-call', id: item.call_id, name: item.name, input: item.arguments });
        known.set(item.call_id, item.name);
        pending.set(item.call_id, item.name);
        break;
      case 'function_call_output': {
        const callParam = param === null ? where : `${param}.call_id`;
        if (checkCalls && !pending.has(item.call_id)) {
          throw invalidMessages(
            callParam,
            known.has(item.call_id)
              ? `Invalid '${callParam}': the function call '${item.call_id}' was already answered.`
              : `Invalid '${callParam}': '${item.call_id}' does not match the call_id of any function_call earlier in the conversation.`,
          );
        }
        pending.delete(item.call_id);
        const result: ToolResultPart = {
          type: 'tool-result',
          toolCallId: item.call_id,
          content: typeof item.output === 'string' ? item.output : item.output.map(toToolResultPart),
        };
        const toolName = known.get(item.call_id);
        if (toolName !== undefined) result.toolName = toolName;
        const last = messages.at(-1);
        if (last?.role === 'tool') last.content.push(result);
        else messages.push({ role: 'tool', content: [result] });
        break;
      }
    }
  }
  requireAnswered('input');
  if (messages.length === 0) {
    throw invalidMessages(
      'input',
      "Invalid 'input': the conversation must contain at least one user, assistant or function_call_output item besides system and developer messages.",
    );
  }
  const system = systemTexts.filter((text) => text.length > 0).join('\n\n');
  return system.length > 0 ? { system, messages } : { messages };
}

function toUserPart(part: InputContent): UserContentPart {
  switch (part.type) {
    case 'input_text':
      return { type: 'text', text: part.text };
    case 'input_image':
      return toImagePart(part);
    case 'input_file': {
      const document: DocumentPart = { type: 'document' };
      const url = part.file_data ?? part.file_url;
      if (url !== undefined) document.url = url;
      const mediaType = part.file_data === undefined ? undefined : parseDataUrl(part.file_data)?.mediaType;
      if (mediaType !== undefined) document.mediaType = mediaType;
      if (part.filename !== undefined) document.title = part.filename;
      return document;
    }
  }
}

function toImagePart(part: InputImageContent): ImagePart {
  const image: ImagePart = { type: 'image', url: part.image_url };
  const mediaType = parseDataUrl(part.image_url)?.mediaType;
  if (mediaType !== undefined) image.mediaType = mediaType;
  // The canonical hint has no `original`: it asks for full resolution, which `high` is closest to.
  image.detail = part.detail === 'original' ? 'high' : part.detail;
  return image;
}

function toToolResultPart(part: InputTextContent | InputImageContent): TextPart | ImagePart {
  return part.type === 'input_text' ? { type: 'text', text: part.text } : toImagePart(part);
}

// ---------------------------------------------------------------------------------------------------
// Other parameters

function decodeInstructions(value: unknown): { text: string | null; echo: ResponseEcho['instructions'] } {
  if (value === undefined || value === null) return { text: null, echo: null };
  if (typeof value === 'string') return { text: value.length > 0 ? value : null, echo: value };
  if (!Array.isArray(value)) throw wrongType('instructions', 'a string or an array of messages', value);
  const echo: InstructionMessageEcho[] = [];
  const texts: string[] = [];
  value.forEach((entry, index) => {
    const param = `instructions[${index}]`;
    const message = expectObject(entry, param);
    const type = optionalString(message, 'type', `${param}.type`);
    if (type !== undefined && type !== 'message')
      throw invalidParameter(`${param}.type`, `Invalid '${param}.type': instructions are 'message' items, got '${type}'.`);
    const role = requiredString(message, 'role', `${param}.role`);
    if (role !== 'system' && role !== 'developer') {
      throw invalidParameter(
        `${param}.role`,
        `Invalid '${param}.role': instructions are 'system' or 'developer' messages, got '${role}'; put other messages in 'input'.`,
      );
    }
    const content = message['content'];
    if (content === undefined || content === null) throw missingParameter(`${param}.content`);
    if (typeof content === 'string') {
      texts.push(content);
      echo.push({ type: 'message', role, content });
      return;
    }
    if (!Array.isArray(content)) throw wrongType(`${param}.content`, 'a string or an array of input_text parts', content);
    const parts = content.map((part, partIndex) => decodeInputPart(part, `${param}.content[${partIndex}]`, false) as InputTextContent);
    texts.push(parts.map((part) => part.text).join('\n'));
    echo.push({ type: 'message', role, content: parts });
  });
  const text = texts.filter((entry) => entry.length > 0).join('\n\n');
  return { text: text.length > 0 ? text : null, echo };
}

function decodeTools(value: unknown): { definitions: ToolDefinition[]; echo: FunctionToolEcho[] } {
  if (value === undefined || value === null) return { definitions: [], echo: [] };
  if (!Array.isArray(value)) throw wrongType('tools', 'an array of tools', value);
  const names = new Set<string>();
  const definitions: ToolDefinition[] = [];
  const echo: FunctionToolEcho[] = [];
  value.forEach((item, index) => {
    const param = `tools[${index}]`;
    const tool = expectObject(item, param);
    const type = requiredString(tool, 'type', `${param}.type`);
    if (type !== 'function') {
      throw invalidParameter(
        `${param}.type`,
        `Invalid '${param}.type': '${type}' tools are not supported by this service; only 'function' tools are.`,
      );
    }
    const name = requiredString(tool, 'name', `${param}.name`);
    if (!FUNCTION_NAME_PATTERN.test(name)) {
      throw invalidParameter(
        `${param}.name`,
        `Invalid '${param}.name': '${name}' must be 1 to 64 characters of a-z, A-Z, 0-9, '_' or '-'.`,
      );
    }
    if (names.has(name)) throw invalidParameter(`${param}.name`, `Invalid '${param}.name': the tool name '${name}' is defined twice.`);
    names.add(name);
    const parameters = tool['parameters'];
    // Omitting `parameters` defines a function that takes no arguments.
    const inputSchema =
      parameters === undefined || parameters === null
        ? { type: 'object', properties: {} }
        : expectObject(parameters, `${param}.parameters`);
    const definition: ToolDefinition = { name, inputSchema };
    const description = optionalString(tool, 'description', `${param}.description`);
    if (description !== undefined) definition.description = description;
    const strict = optionalBoolean(tool, 'strict', `${param}.strict`);
    if (strict !== undefined) definition.strict = strict;
    definitions.push(definition);
    echo.push({ type: 'function', name, description: description ?? null, parameters: inputSchema, strict: strict ?? null });
  });
  return { definitions, echo };
}

function decodeToolChoice(value: unknown, tools: ToolDefinition[]): { choice?: ToolChoice; echo: ToolChoiceEcho } {
  if (value === undefined || value === null) return { echo: 'auto' };
  if (typeof value === 'string') {
    if (value === 'none') return { choice: { type: 'none' }, echo: 'none' };
    if (value === 'auto') return { choice: { type: 'auto' }, echo: 'auto' };
    if (value === 'required') {
      if (tools.length === 0)
        throw invalidParameter('tool_choice', "Invalid 'tool_choice': 'required' needs at least one tool in 'tools'.");
      return { choice: { type: 'required' }, echo: 'required' };
    }
    throw invalidParameter(
      'tool_choice',
      `Invalid 'tool_choice': '${value}' is not one of 'none', 'auto', 'required' or a {type: 'function', name} object.`,
    );
  }
  const choice = expectObject(value, 'tool_choice');
  const type = requiredString(choice, 'type', 'tool_choice.type');
  if (type !== 'function')
    throw invalidParameter('tool_choice.type', `Invalid 'tool_choice.type': only 'function' is supported, got '${type}'.`);
  const name = requiredString(choice, 'name', 'tool_choice.name');
  if (!tools.some((tool) => tool.name === name)) {
    throw invalidParameter('tool_choice.name', `Invalid 'tool_choice.name': no function named '${name}' is defined in 'tools'.`);
  }
  return { choice: { type: 'tool', name }, echo: { type: 'function', name } };
}

function decodeText(value: unknown, ignoredParameters: string[]): { format?: ResponseFormat; echo: TextConfigEcho } {
  if (value === undefined || value === null) return { echo: { format: { type: 'text' } } };
  const text = expectObject(value, 'text');
  const echo: TextConfigEcho = { format: { type: 'text' } };
  const verbosity = optionalEnum(text, 'verbosity', ['low', 'medium', 'high'] as const, 'text.verbosity');
  if (verbosity !== undefined) {
    echo.verbosity = verbosity;
    ignoredParameters.push('text.verbosity');
  }
  const formatValue = text['format'];
  if (formatValue === undefined || formatValue === null) return { echo };
  const format = expectObject(formatValue, 'text.format');
  const type = requiredString(format, 'type', 'text.format.type');
  if (type === 'text') return { format: { type: 'text' }, echo };
  if (type === 'json_object') {
    echo.format = { type: 'json_object' };
    return { format: { type: 'json_object' }, echo };
  }
  if (type !== 'json_schema') {
    throw invalidParameter('text.format.type', `Invalid 'text.format.type': '${type}' is not one of 'text', 'json_object', 'json_schema'.`);
  }
  const name = requiredString(format, 'name', 'text.format.name');
  if (!FUNCTION_NAME_PATTERN.test(name)) {
    throw invalidParameter(
      'text.format.name',
      `Invalid 'text.format.name': '${name}' must be 1 to 64 characters of a-z, A-Z, 0-9, '_' or '-'.`,
    );
  }
  const schemaValue = format['schema'];
  if (schemaValue === undefined || schemaValue === null) throw missingParameter('text.format.schema');
  const schema = expectObject(schemaValue, 'text.format.schema');
  const strict = optionalBoolean(format, 'strict', 'text.format.strict');
  const description = optionalString(format, 'description', 'text.format.description');
  const responseFormat: ResponseFormat = { type: 'json_schema', name, schema };
  const formatEcho: TextFormatEcho = { type: 'json_schema', name, schema, strict: strict ?? null };
  if (strict !== undefined) responseFormat.strict = strict;
  if (description !== undefined) {
    responseFormat.description = description;
    formatEcho.description = description;
  }
  echo.format = formatEcho;
  return { format: responseFormat, echo };
}

function decodeReasoning(value: unknown, ignoredParameters: string[], decodeOptions: DecodeOptions): ResponseEcho['reasoning'] {
  if (value === undefined || value === null) return { effort: null, summary: null };
  const reasoning = expectObject(value, 'reasoning');
  const efforts = decodeOptions.validation === 'compatible' ? COMPATIBLE_REASONING_EFFORTS : REASONING_EFFORTS;
  const effort = optionalEnum(reasoning, 'effort', efforts, 'reasoning.effort') ?? null;
  // Summaries are not produced: the full reasoning text is given in the reasoning item's `content`.
  const summary = optionalEnum(reasoning, 'summary', REASONING_SUMMARIES, 'reasoning.summary') ?? null;
  if (summary !== null) ignoredParameters.push('reasoning.summary');
  const generateSummary = optionalEnum(reasoning, 'generate_summary', REASONING_SUMMARIES, 'reasoning.generate_summary');
  if (generateSummary !== undefined) ignoredParameters.push('reasoning.generate_summary');
  return { effort, summary: summary ?? generateSummary ?? null };
}

/**
 * Fields of the OpenAI request whose features this service cannot provide. Those that would change what
 * the client gets back are refused with a 400; hints that only tune the backend are reported in
 * `ignoredParameters`.
 */
function decodeUnsupportedFeatures(body: JsonObject, ignoredParameters: string[]): void {
  if (optionalBoolean(body, 'background') === true) {
    throw invalidParameter(
      'background',
      "Invalid 'background': background responses are not supported; omit 'background' and wait for the answer, or stream it.",
    );
  }
  if (body['conversation'] !== undefined && body['conversation'] !== null) {
    throw invalidParameter(
      'conversation',
      "Invalid 'conversation': conversation objects are not supported; continue a stored conversation with 'previous_response_id'.",
    );
  }
  if (body['prompt'] !== undefined && body['prompt'] !== null) {
    throw invalidParameter('prompt', "Invalid 'prompt': prompt templates are not supported; send 'instructions' and 'input' instead.");
  }
  const topLogprobs = optionalInteger(body, 'top_logprobs');
  if (topLogprobs !== undefined && topLogprobs !== 0) {
    throw invalidParameter(
      'top_logprobs',
      "Invalid 'top_logprobs': log probabilities are not available from this service; omit 'top_logprobs'.",
    );
  }
  const include = body['include'];
  if (include !== undefined && include !== null) {
    if (!Array.isArray(include)) throw wrongType('include', 'an array of strings', include);
    include.forEach((entry, index) => {
      if (typeof entry !== 'string') throw wrongType(`include[${index}]`, 'a string', entry);
    });
  }
  if (optionalInteger(body, 'max_tool_calls') !== undefined) ignoredParameters.push('max_tool_calls');
}
