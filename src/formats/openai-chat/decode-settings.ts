/**
 * The generation settings of a chat completions body beyond sampling's plain numbers (read in
 * decode-request.ts): `stop`, `stream_options`, `response_format`, `reasoning_effort`, and the fields whose
 * features this service cannot give (refused, or listed in `ignoredParameters` when they only tune the
 * backend).
 */
import type { GenerationRequest, ResponseFormat } from '../../core/generation.ts';
import { invalidParameter, missingParameter } from '../../core/service-error.ts';
import {
  expectObject,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalNumberInRange,
  optionalString,
  requiredString,
  wrongType,
  type JsonObject,
} from '../shared/request-fields.ts';
import { FUNCTION_NAME_PATTERN } from './decode-tools.ts';

/** OpenAI's chat `stop` limit. */
const MAX_STOP_SEQUENCES = 4;
const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

/**
 * `reasoning_effort`: the canonical request knows low/medium/high; the finer OpenAI levels map to the
 * nearest of them, and `none` means "do not ask for reasoning", which is the canonical default.
 */
export function decodeReasoningEffort(body: JsonObject): GenerationRequest['reasoningEffort'] {
  const reasoningEffort = optionalEnum(body, 'reasoning_effort', REASONING_EFFORTS);
  if (reasoningEffort === 'minimal' || reasoningEffort === 'low') return 'low';
  if (reasoningEffort === 'medium') return 'medium';
  if (reasoningEffort === 'high' || reasoningEffort === 'xhigh' || reasoningEffort === 'max') return 'high';
  return undefined;
}

export function decodeStop(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    if (value.length === 0) throw invalidParameter('stop', "Invalid 'stop': a stop sequence must not be empty.");
    return [value];
  }
  if (!Array.isArray(value)) throw wrongType('stop', 'a string or an array of strings', value);
  if (value.length > MAX_STOP_SEQUENCES) {
    throw invalidParameter('stop', `Invalid 'stop': at most ${MAX_STOP_SEQUENCES} stop sequences are allowed, got ${value.length}.`);
  }
  const sequences = value.map((item, index) => {
    if (typeof item !== 'string') throw wrongType(`stop[${index}]`, 'a string', item);
    if (item.length === 0) throw invalidParameter(`stop[${index}]`, `Invalid 'stop[${index}]': a stop sequence must not be empty.`);
    return item;
  });
  return sequences.length > 0 ? sequences : undefined;
}

/** Returns `include_usage`. `stream_options` is only meaningful with `stream: true`, as OpenAI rules. */
export function decodeStreamOptions(value: unknown, stream: boolean): boolean {
  if (value === undefined || value === null) return false;
  const options = expectObject(value, 'stream_options');
  if (!stream) throw invalidParameter('stream_options', "Invalid 'stream_options': it is only allowed when 'stream' is true.");
  return optionalBoolean(options, 'include_usage', 'stream_options.include_usage') ?? false;
}

export function decodeResponseFormat(value: unknown): ResponseFormat | undefined {
  if (value === undefined || value === null) return undefined;
  const format = expectObject(value, 'response_format');
  const type = requiredString(format, 'type', 'response_format.type');
  if (type === 'text') return { type: 'text' };
  if (type === 'json_object') return { type: 'json_object' };
  if (type !== 'json_schema') {
    throw invalidParameter(
      'response_format.type',
      `Invalid 'response_format.type': '${type}' is not one of 'text', 'json_object', 'json_schema'.`,
    );
  }
  const schemaValue = format['json_schema'];
  if (schemaValue === undefined || schemaValue === null) throw missingParameter('response_format.json_schema');
  const jsonSchema = expectObject(schemaValue, 'response_format.json_schema');
  const name = requiredString(jsonSchema, 'name', 'response_format.json_schema.name');
  if (!FUNCTION_NAME_PATTERN.test(name)) {
    throw invalidParameter(
      'response_format.json_schema.name',
      `Invalid 'response_format.json_schema.name': '${name}' must be 1 to 64 characters of a-z, A-Z, 0-9, '_' or '-'.`,
    );
  }
  const schema = jsonSchema['schema'];
  if (schema === undefined || schema === null) throw missingParameter('response_format.json_schema.schema');
  const result: ResponseFormat = { type: 'json_schema', name, schema: expectObject(schema, 'response_format.json_schema.schema') };
  const strict = optionalBoolean(jsonSchema, 'strict', 'response_format.json_schema.strict');
  if (strict !== undefined) result.strict = strict;
  const description = optionalString(jsonSchema, 'description', 'response_format.json_schema.description');
  if (description !== undefined) result.description = description;
  return result;
}

/**
 * Fields whose features this service cannot provide. Those that would change what the client gets back
 * (log probabilities, audio, web search, the legacy `functions`) are refused with a 400; sampling hints
 * the backends do not take are validated and reported in `ignoredParameters`.
 */

export function decodeUnsupportedFeatures(body: JsonObject, ignoredParameters: string[]): void {
  if (optionalBoolean(body, 'logprobs') === true) {
    throw invalidParameter(
      'logprobs',
      "Invalid 'logprobs': log probabilities are not available from this service; omit 'logprobs' or set it to false.",
    );
  }
  const topLogprobs = optionalInteger(body, 'top_logprobs');
  if (topLogprobs !== undefined && topLogprobs !== 0) {
    throw invalidParameter(
      'top_logprobs',
      "Invalid 'top_logprobs': log probabilities are not available from this service; omit 'top_logprobs'.",
    );
  }
  const modalities = body['modalities'];
  if (modalities !== undefined && modalities !== null) {
    if (!Array.isArray(modalities)) throw wrongType('modalities', 'an array of strings', modalities);
    modalities.forEach((modality, index) => {
      if (modality !== 'text') {
        throw invalidParameter(`modalities[${index}]`, `Invalid 'modalities[${index}]': only 'text' output is supported by this service.`);
      }
    });
  }
  if (body['audio'] !== undefined && body['audio'] !== null) {
    throw invalidParameter('audio', "Invalid 'audio': audio output is not supported by this service.");
  }
  if (body['web_search_options'] !== undefined && body['web_search_options'] !== null) {
    throw invalidParameter('web_search_options', "Invalid 'web_search_options': web search is not available from this service.");
  }
  for (const legacy of ['functions', 'function_call'] as const) {
    if (body[legacy] !== undefined && body[legacy] !== null) {
      throw invalidParameter(
        legacy,
        `Invalid '${legacy}': the deprecated function-calling fields are not supported; use 'tools' and 'tool_choice'.`,
      );
    }
  }
  for (const penalty of ['frequency_penalty', 'presence_penalty'] as const) {
    const amount = optionalNumberInRange(body, penalty, -2, 2);
    if (amount !== undefined && amount !== 0) ignoredParameters.push(penalty);
  }
  const logitBias = body['logit_bias'];
  if (logitBias !== undefined && logitBias !== null) {
    if (Object.keys(expectObject(logitBias, 'logit_bias')).length > 0) ignoredParameters.push('logit_bias');
  }
  if (optionalString(body, 'verbosity') !== undefined) ignoredParameters.push('verbosity');
}
