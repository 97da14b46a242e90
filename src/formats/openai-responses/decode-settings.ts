/**
 * The generation settings of a `POST /v1/responses` body beyond sampling's plain numbers (read in
 * decode-request.ts): `max_output_tokens` and its deprecated alias, `text.format` (the canonical response
 * format), `reasoning`, and the fields whose features this service cannot give (refused, or listed in
 * `ignoredParameters` when they only tune the backend).
 */
import type { ResponseFormat } from '../../core/generation.ts';
import { invalidParameter, missingParameter, ServiceError } from '../../core/service-error.ts';
import type { DecodeOptions } from '../shared/decode-options.ts';
import {
  expectObject,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalPositiveInteger,
  optionalString,
  requiredString,
  wrongType,
  type JsonObject,
} from '../shared/request-fields.ts';
import { FUNCTION_NAME_PATTERN } from './decode-tools.ts';
import type { ResponseEcho, TextConfigEcho, TextFormatEcho } from './wire-types.ts';

const REASONING_EFFORTS = ['low', 'medium', 'high'] as const;
/** `compatible` validation also takes OpenAI's `minimal` (accepted on chat completions), generated as `low`. */
const COMPATIBLE_REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
const REASONING_SUMMARIES = ['auto', 'concise', 'detailed'] as const;

/**
 * SPEC: `max_output_tokens` is required (>= 1); `max_tokens` is its deprecated alias and must agree with
 * it. `compatible`: a missing maximum is undefined (the generation reserves and caps like chat completions).
 */
export function decodeMaxOutputTokens(
  body: JsonObject,
  decodeOptions: DecodeOptions,
): { maxOutputTokens: number | undefined; usedDeprecatedMaxTokens: boolean } {
  const maxOutputTokensValue = optionalPositiveInteger(body, 'max_output_tokens');
  const maxTokensValue = optionalPositiveInteger(body, 'max_tokens');
  if (maxOutputTokensValue !== undefined && maxTokensValue !== undefined && maxOutputTokensValue !== maxTokensValue) {
    throw invalidParameter(
      'max_tokens',
      "Invalid 'max_tokens': it differs from 'max_output_tokens'. Send only 'max_output_tokens' ('max_tokens' is its deprecated alias).",
    );
  }
  const maxOutputTokens = maxOutputTokensValue ?? maxTokensValue;
  if (maxOutputTokens === undefined && decodeOptions.validation === 'spec') {
    const missing = missingParameter(
      'max_output_tokens',
      "Missing required parameter: 'max_output_tokens' (an integer >= 1, the most tokens the response may contain).",
    );
    // The OpenAI SDK's most common call leaves it out: say which setting of the service accepts that.
    throw new ServiceError({
      status: missing.status,
      type: missing.type,
      code: missing.code,
      param: missing.param,
      message: missing.message,
      details: {
        hint: 'The service runs with REQUEST_VALIDATION=spec, which requires max_output_tokens; its operator can set REQUEST_VALIDATION=compatible to accept requests without it (README "Request validation").',
        setting: 'REQUEST_VALIDATION=compatible',
      },
    });
  }
  return { maxOutputTokens, usedDeprecatedMaxTokens: maxOutputTokensValue === undefined && maxTokensValue !== undefined };
}

export function decodeText(value: unknown, ignoredParameters: string[]): { format?: ResponseFormat; echo: TextConfigEcho } {
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

export function decodeReasoning(value: unknown, ignoredParameters: string[], decodeOptions: DecodeOptions): ResponseEcho['reasoning'] {
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
export function decodeUnsupportedFeatures(body: JsonObject, ignoredParameters: string[]): void {
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
