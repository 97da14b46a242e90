/**
 * Decodes an OpenAI `POST /v1/chat/completions` body into the canonical GenerationRequest.
 *
 * Wire document: OpenAI OpenAPI `CreateChatCompletionRequest` and `ChatCompletionRequestMessage`
 * (docs/wire-contracts.md "Chat completions"), with the docs/spec.md rules winning where they differ: temperature
 * and top_p 0.0-1.0, max_tokens >= 1, and the SPEC error codes. Strict on the way in (docs/design.md
 * convention 4): every refusal is a 400 ServiceError whose `param` is the dotted path of the field.
 *
 * Code choice, the same for every field: a value of the wrong JSON type is `invalid_format`; a value of
 * the right type that is not allowed (range, enum, unsupported feature) is `invalid_parameter`; an absent
 * required field is `missing_parameter`; a malformed conversation (role, content block kind, tool
 * message order) is `invalid_messages`. `null` counts as absent for optional fields (the SDK types make
 * most fields nullable). Fields this decoder does not know are ignored, because SDKs add new ones.
 */
import type { GenerationRequest } from '../../core/generation.ts';
import { invalidFormat, invalidParameter } from '../../core/service-error.ts';
import { maxTemperature, SPEC_DECODE_OPTIONS, type DecodeOptions } from '../shared/decode-options.ts';
import {
  describeType,
  isObject,
  optionalBoolean,
  optionalInteger,
  optionalMetadata,
  optionalNumberInRange,
  optionalPositiveInteger,
  optionalString,
  requiredString,
} from '../shared/request-fields.ts';
import { decodeMessages } from './decode-messages.ts';
import {
  decodeReasoningEffort,
  decodeResponseFormat,
  decodeStop,
  decodeStreamOptions,
  decodeUnsupportedFeatures,
} from './decode-settings.ts';
import { decodeToolChoice, decodeTools } from './decode-tools.ts';

/** What the chat encoders need besides the canonical request. */
export interface ChatCompletionOptions {
  /** The `model` string exactly as the client sent it (echoed by default in responses and chunks). */
  model: string;
  /** `stream: true`: answer with server-sent chunks. */
  stream: boolean;
  /** `stream_options.include_usage: true`: one extra chunk with `choices: []` and `usage` before `[DONE]`. */
  includeUsage: boolean;
  /**
   * Wire names of parameters that were valid but will not be honoured (for example a non-zero
   * `frequency_penalty`), for a warning header and log line. Empty when everything is honoured.
   */
  ignoredParameters: string[];
  /**
   * Wire path of the first image (`messages[1].content[0].image_url`), to name as `param` when the model
   * lacks `vision` (canonical message indices differ: system messages are hoisted, tool messages merged).
   * Undefined when the request has no image.
   */
  imageParam?: string;
}

export interface DecodedChatCompletionRequest {
  request: GenerationRequest;
  options: ChatCompletionOptions;
}

/**
 * Decodes and validates a chat completions request body (already JSON-parsed).
 * Throws a 400 ServiceError with a precise `param` for any client mistake.
 */
export function decodeChatCompletionRequest(
  body: unknown,
  decodeOptions: DecodeOptions = SPEC_DECODE_OPTIONS,
): DecodedChatCompletionRequest {
  if (!isObject(body)) throw invalidFormat(null, `The request body must be a JSON object, but got ${describeType(body)} instead.`);

  const model = requiredString(body, 'model', 'model');
  if (model.length === 0) throw invalidParameter('model', "Invalid 'model': the model id must not be empty.");

  const { system, messages, imageParam } = decodeMessages(body['messages']);
  const request: GenerationRequest = { model, messages };
  if (system !== undefined) request.system = system;
  const ignoredParameters: string[] = [];

  // SPEC: 0.0-1.0; `compatible` validation takes OpenAI's 0.0-2.0.
  const temperature = optionalNumberInRange(body, 'temperature', 0, maxTemperature(decodeOptions));
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optionalNumberInRange(body, 'top_p', 0, 1);
  if (topP !== undefined) request.topP = topP;

  const maxCompletionTokens = optionalPositiveInteger(body, 'max_completion_tokens');
  const maxTokens = optionalPositiveInteger(body, 'max_tokens');
  if (maxCompletionTokens !== undefined && maxTokens !== undefined && maxCompletionTokens !== maxTokens) {
    throw invalidParameter(
      'max_tokens',
      "Invalid 'max_tokens': it differs from 'max_completion_tokens'. Send only one of them ('max_tokens' is the deprecated spelling).",
    );
  }
  const maxOutputTokens = maxCompletionTokens ?? maxTokens;
  if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens;

  const choiceCount = optionalInteger(body, 'n');
  if (choiceCount !== undefined && choiceCount !== 1) {
    throw invalidParameter(
      'n',
      choiceCount < 1
        ? `Invalid 'n': ${choiceCount} is less than the minimum of 1.`
        : `Invalid 'n': this service generates one choice per request, so 'n' must be 1 (got ${choiceCount}). Send ${choiceCount} separate requests instead.`,
    );
  }

  const stopSequences = decodeStop(body['stop']);
  if (stopSequences !== undefined) request.stopSequences = stopSequences;

  const stream = optionalBoolean(body, 'stream') ?? false;
  const includeUsage = decodeStreamOptions(body['stream_options'], stream);

  const tools = decodeTools(body['tools']);
  if (tools !== undefined) request.tools = tools;
  const toolChoice = decodeToolChoice(body['tool_choice'], tools);
  if (toolChoice !== undefined) request.toolChoice = toolChoice;
  const parallelToolCalls = optionalBoolean(body, 'parallel_tool_calls');
  if (parallelToolCalls !== undefined) request.parallelToolCalls = parallelToolCalls;

  const responseFormat = decodeResponseFormat(body['response_format']);
  if (responseFormat !== undefined) request.responseFormat = responseFormat;

  const seed = optionalInteger(body, 'seed');
  if (seed !== undefined) request.seed = seed;
  const user = optionalString(body, 'user');
  if (user !== undefined) request.user = user;
  const metadata = optionalMetadata(body['metadata']);
  if (metadata !== undefined) request.metadata = metadata;

  const reasoningEffort = decodeReasoningEffort(body);
  if (reasoningEffort !== undefined) request.reasoningEffort = reasoningEffort;

  decodeUnsupportedFeatures(body, ignoredParameters);

  const options: ChatCompletionOptions = { model, stream, includeUsage, ignoredParameters };
  if (imageParam !== undefined) options.imageParam = imageParam;
  return { request, options };
}
