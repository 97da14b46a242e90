/**
 * Anthropic Messages request -> canonical GenerationRequest, following docs/spec.md "Message request" (which
 * wins where it states a rule) and the Anthropic Messages API request shape for what SPEC leaves open.
 *
 * Strict on the way in (docs/design.md convention 4): every violation is a 400 ServiceError with a SPEC code
 * and the dotted `param` of the offending field. The rule used for codes throughout:
 *   - a required field is absent (or null)                 -> missing_parameter
 *   - a field has the wrong JSON type / malformed value     -> invalid_format
 *   - a field has the right type but a value not allowed    -> invalid_parameter
 *   - the conversation is malformed (roles, order, blocks)  -> invalid_messages
 * Optional fields given as `null` count as absent. Unknown top-level fields are rejected (never silently
 * dropped); unknown keys inside content blocks are ignored, so that blocks copied from a real Anthropic
 * response (e.g. `citations: null`) can be sent back unchanged.
 *
 * `output_config.format` (and the older beta `output_format`) ask for JSON-schema structured output and
 * become the canonical `json_schema` response format, in both validation modes. `requestValidation:
 * compatible` (DecodeOptions) accepts what the Anthropic API and its clients do where the SPEC is
 * stricter: consecutive messages of one role (merged into one turn), an assistant message first, a tool
 * without `description`, and `temperature` up to 2.
 */
import type { GenerationRequest } from '../../core/generation.ts';
import { invalidFormat, invalidParameter, missingParameter } from '../../core/service-error.ts';
import { maxTemperature, SPEC_DECODE_OPTIONS, type DecodeOptions } from '../shared/decode-options.ts';
import { isObject, MESSAGES_WORDING as W, present, requiredString, wrongType } from '../shared/request-fields.ts';
import { decodeMessages } from './decode-messages.ts';
import {
  decodeMetadata,
  decodeOutputFormat,
  decodeServiceTier,
  decodeStopSequences,
  decodeSystem,
  decodeThinking,
  integerAtLeast,
  numberInRange,
} from './decode-settings.ts';
import { decodeToolChoice, decodeTools } from './decode-tools.ts';

/** What a `/v1/messages` body decodes to: the canonical request plus the transport choices that are not generation parameters. */
export interface DecodedMessagesRequest {
  request: GenerationRequest;
  /** True when the client asked for server-sent events (`stream: true`). */
  stream: boolean;
  /** Anthropic `service_tier` as sent (default `auto`). No backend takes it; kept for logging and echo. */
  serviceTier: 'auto' | 'standard_only';
  /**
   * Wire path of the first image block (`messages[2].content[0]`, or inside a tool_result
   * `messages[2].content[0].content[1]`), for the 400 when the model lacks `vision`. Canonical message
   * indexes differ from the wire's (tool results become their own messages), hence this.
   */
  imageParam?: string;
}

/** Top-level fields of SPEC "Message request"; `cache_control` is accepted as a caching hint with no effect on the answer. */
const KNOWN_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'temperature',
  'stream',
  'top_p',
  'top_k',
  'stop_sequences',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
  'service_tier',
  'cache_control',
  'output_config',
  'output_format',
]);

/**
 * Decodes a `POST /v1/messages` body. Throws a 400 ServiceError on the first violation found, checking
 * fields in SPEC table order.
 */
export function decodeMessagesRequest(body: unknown, options: DecodeOptions = SPEC_DECODE_OPTIONS): DecodedMessagesRequest {
  return decodeBody(body, { maxTokensRequired: true, allowStream: true }, options);
}

/**
 * Decodes a `POST /v1/messages/count_tokens` body: a message request without `max_tokens` (accepted and
 * checked when given) and without `stream`. Returns the canonical request to count.
 */
export function decodeCountTokensRequest(body: unknown, options: DecodeOptions = SPEC_DECODE_OPTIONS): GenerationRequest {
  return decodeBody(body, { maxTokensRequired: false, allowStream: false }, options).request;
}

function decodeBody(
  body: unknown,
  mode: { maxTokensRequired: boolean; allowStream: boolean },
  options: DecodeOptions,
): DecodedMessagesRequest {
  const compatible = options.validation === 'compatible';
  if (!isObject(body)) throw invalidFormat(null, `The request body must be a JSON object, got ${W.describe(body)}.`);

  for (const key of Object.keys(body)) {
    if (!KNOWN_FIELDS.has(key) || (key === 'stream' && !mode.allowStream)) {
      throw invalidParameter(key, `Unknown parameter: '${key}'. This endpoint does not support it.`);
    }
  }

  const model = requiredString(body, 'model', 'model', W);
  if (model.trim() === '') throw invalidParameter('model', "'model' must not be empty.");

  const imagePaths: string[] = [];
  const messages = decodeMessages(body['messages'], imagePaths, compatible);

  const request: GenerationRequest = { model, messages };

  const maxTokens = present(body['max_tokens']);
  if (maxTokens === undefined) {
    if (mode.maxTokensRequired) throw missingParameter('max_tokens');
  } else {
    request.maxOutputTokens = integerAtLeast(maxTokens, 'max_tokens', 1);
  }

  const system = present(body['system']);
  if (system !== undefined) {
    const text = decodeSystem(system);
    if (text !== '') request.system = text;
  }

  const temperature = present(body['temperature']);
  if (temperature !== undefined) request.temperature = numberInRange(temperature, 'temperature', maxTemperature(options));

  const stream = present(body['stream']);
  if (stream !== undefined && typeof stream !== 'boolean') throw wrongType('stream', 'a boolean', stream, W);

  const topP = present(body['top_p']);
  if (topP !== undefined) request.topP = numberInRange(topP, 'top_p', 1);

  const topK = present(body['top_k']);
  if (topK !== undefined) request.topK = integerAtLeast(topK, 'top_k', 1);

  const stopSequences = present(body['stop_sequences']);
  if (stopSequences !== undefined) {
    const decoded = decodeStopSequences(stopSequences);
    if (decoded.length > 0) request.stopSequences = decoded;
  }

  const tools = present(body['tools']);
  if (tools !== undefined) {
    const decoded = decodeTools(tools, compatible);
    if (decoded.length > 0) request.tools = decoded;
  }

  const toolChoice = present(body['tool_choice']);
  if (toolChoice !== undefined) {
    const decoded = decodeToolChoice(toolChoice, request.tools ?? []);
    request.toolChoice = decoded.choice;
    if (decoded.parallelToolCalls !== undefined) request.parallelToolCalls = decoded.parallelToolCalls;
  }

  const thinking = present(body['thinking']);
  if (thinking !== undefined) {
    const budgetTokens = decodeThinking(thinking, request.maxOutputTokens);
    if (budgetTokens !== undefined) request.thinking = { budgetTokens };
  }

  const metadata = present(body['metadata']);
  if (metadata !== undefined) {
    const decoded = decodeMetadata(metadata);
    if (decoded.user !== undefined) request.user = decoded.user;
    if (Object.keys(decoded.rest).length > 0) request.metadata = decoded.rest;
  }

  const outputFormat = decodeOutputFormat(present(body['output_config']), present(body['output_format']));
  if (outputFormat !== undefined) request.responseFormat = outputFormat;

  const serviceTier = decodeServiceTier(present(body['service_tier']));

  const decoded: DecodedMessagesRequest = { request, stream: stream === true, serviceTier };
  if (imagePaths[0] !== undefined) decoded.imageParam = imagePaths[0];
  return decoded;
}
