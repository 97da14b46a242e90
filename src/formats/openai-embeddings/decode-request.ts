/**
 * Decodes an OpenAI `POST /v1/embeddings` body.
 *
 * Wire document: docs/spec.md "Embeddings request" (model optional, input string or array of strings,
 * encoding_format `float` | `base64`), completed by the OpenAI OpenAPI `CreateEmbeddingRequest`
 * (`dimensions`, `user`, at most 2048 inputs, no empty strings). Strict on the way in (docs/design.md
 * convention 4), with the code choice of formats/openai-chat: wrong JSON type -> `invalid_format`,
 * right type but not allowed -> `invalid_parameter`, absent -> `missing_parameter`; `null` counts as
 * absent for optional fields; unknown fields are ignored (SDKs add new ones).
 *
 * Token arrays (`input: [1, 2, 3]` or `[[1, 2], [3]]`, which OpenAI accepts) are refused with a 400:
 * token ids are tokenizer-specific and mean nothing to most backends here.
 */
import { countTextTokens } from '../../core/count-tokens.ts';
import { invalidFormat, invalidParameter, missingParameter } from '../../core/service-error.ts';
import { isObject, describeType, wrongType } from '../shared/request-fields.ts';

/** Most inputs in one request (OpenAI's limit). */
export const MAX_EMBEDDING_INPUTS = 2048;

export type EmbeddingEncodingFormat = 'float' | 'base64';

export interface DecodedEmbeddingsRequest {
  /** The model as the client named it, or null to use the service's default embedding model. */
  model: string | null;
  /** The texts, in request order (a single string becomes one input). */
  inputs: string[];
  /** True when `input` was an array (errors then name `input[i]`), false for a single string. */
  inputIsArray: boolean;
  encodingFormat: EmbeddingEncodingFormat;
  /** Requested vector length, values; absent for the model's full length. */
  dimensions?: number;
  /** End-user identifier. */
  user?: string;
}

const tokenArraysRefused = (param: string) =>
  invalidParameter(param, `Invalid '${param}': token arrays are not supported by this service; send the text instead.`);

function decodeInput(value: unknown): string[] {
  if (value === undefined || value === null) throw missingParameter('input', "Missing required parameter: 'input'.");
  if (typeof value === 'string') {
    if (value.length === 0) throw invalidParameter('input', "Invalid 'input': the input must not be an empty string.");
    return [value];
  }
  if (!Array.isArray(value)) throw wrongType('input', 'a string or an array of strings', value);
  if (value.length === 0) throw invalidParameter('input', "Invalid 'input': the array must contain at least one string.");
  if (value.length > MAX_EMBEDDING_INPUTS) {
    throw invalidParameter(
      'input',
      `Invalid 'input': at most ${MAX_EMBEDDING_INPUTS} inputs are allowed per request, but ${value.length} were given.`,
    );
  }
  if (typeof value[0] === 'number' || Array.isArray(value[0])) throw tokenArraysRefused('input');
  return value.map((item: unknown, index) => {
    const param = `input[${index}]`;
    if (typeof item !== 'string') {
      if (typeof item === 'number' || Array.isArray(item)) throw tokenArraysRefused(param);
      throw wrongType(param, 'a string', item);
    }
    if (item.length === 0) throw invalidParameter(param, `Invalid '${param}': inputs must not be empty strings.`);
    return item;
  });
}

/** Decodes and validates the body (already JSON-parsed). Throws a 400 ServiceError with a precise `param`. */
export function decodeEmbeddingsRequest(body: unknown): DecodedEmbeddingsRequest {
  if (!isObject(body)) throw invalidFormat(null, `The request body must be a JSON object, but got ${describeType(body)} instead.`);

  let model: string | null = null;
  if (body['model'] !== undefined && body['model'] !== null) {
    if (typeof body['model'] !== 'string') throw wrongType('model', 'a string', body['model']);
    if (body['model'].length === 0) throw invalidParameter('model', "Invalid 'model': the model id must not be empty.");
    model = body['model'];
  }

  const inputs = decodeInput(body['input']);

  let encodingFormat: EmbeddingEncodingFormat = 'float';
  const format = body['encoding_format'];
  if (format !== undefined && format !== null) {
    if (typeof format !== 'string') throw wrongType('encoding_format', 'a string', format);
    if (format !== 'float' && format !== 'base64') {
      throw invalidParameter('encoding_format', `Invalid 'encoding_format': expected 'float' or 'base64', but got '${format}'.`);
    }
    encodingFormat = format;
  }

  const decoded: DecodedEmbeddingsRequest = { model, inputs, inputIsArray: Array.isArray(body['input']), encodingFormat };

  const dimensions = body['dimensions'];
  if (dimensions !== undefined && dimensions !== null) {
    if (typeof dimensions !== 'number') throw wrongType('dimensions', 'an integer', dimensions);
    if (!Number.isInteger(dimensions) || dimensions < 1) {
      throw invalidParameter('dimensions', `Invalid 'dimensions': expected an integer of at least 1, but got ${dimensions}.`);
    }
    decoded.dimensions = dimensions;
  }

  const user = body['user'];
  if (user !== undefined && user !== null) {
    if (typeof user !== 'string') throw wrongType('user', 'a string', user);
    decoded.user = user;
  }
  return decoded;
}

/**
 * Counts each input's tokens (core/count-tokens.ts) and refuses, with a 400 naming `input` or `input[i]`, an
 * input longer than the model's context window. Returns the counts (tokens per input, in order).
 */
export function checkEmbeddingInputTokens(
  request: Pick<DecodedEmbeddingsRequest, 'inputs' | 'inputIsArray'>,
  maxInputTokens: number,
): number[] {
  return request.inputs.map((input, index) => {
    const tokens = countTextTokens(input);
    if (tokens > maxInputTokens) {
      const param = request.inputIsArray ? `input[${index}]` : 'input';
      throw invalidParameter(
        param,
        `Invalid '${param}': this model's maximum input length is ${maxInputTokens} tokens, but the input has ${tokens} tokens. Shorten the input.`,
      );
    }
    return tokens;
  });
}
