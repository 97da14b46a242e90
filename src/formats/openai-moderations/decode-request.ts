/**
 * Decodes an OpenAI `POST /v1/moderations` body.
 *
 * Wire document: docs/spec.md "Endpoints" (`input`, `model`) and "Moderation result", completed by the
 * OpenAI OpenAPI `CreateModerationRequest`: `input` is a string, an array of strings, or an array of
 * multi-modal parts (`{type: "text", text}` / `{type: "image_url", ...}`); `model` is optional. Text
 * parts are accepted (one input each); image parts are refused with a 400, as no moderation model here
 * reads images. Code choice as in formats/openai-chat (wrong type -> `invalid_format`, not allowed ->
 * `invalid_parameter`, absent -> `missing_parameter`); unknown fields are ignored.
 */
import { invalidFormat, invalidParameter, missingParameter } from '../../core/service-error.ts';
import { isObject, describeType, wrongType } from '../shared/request-fields.ts';

/** Most inputs in one request (a count). */
export const MAX_MODERATION_INPUTS = 256;
/**
 * Most characters of text in one request, all inputs together (1 MiB; about 250,000 tokens of
 * English). Moderation work grows with its input, on a shared engine: past this, 400 naming `input`.
 */
export const MAX_MODERATION_INPUT_CHARACTERS = 1024 * 1024;

/** The inputs, or a 400 naming `input` when together they are longer than MAX_MODERATION_INPUT_CHARACTERS. */
function capped(inputs: string[]): string[] {
  let characters = 0;
  for (const input of inputs) characters += input.length;
  if (characters > MAX_MODERATION_INPUT_CHARACTERS) {
    throw invalidParameter(
      'input',
      `Invalid 'input': at most ${MAX_MODERATION_INPUT_CHARACTERS} characters of text are allowed per request, but ${characters} were given. Split the text over several requests.`,
    );
  }
  return inputs;
}

export interface DecodedModerationRequest {
  /** The model as the client named it, or null for the service's default moderation model. */
  model: string | null;
  /** Texts to classify, in request order (a single string becomes one input). */
  inputs: string[];
}

function decodeItem(item: unknown, param: string): string {
  if (typeof item === 'string') return item;
  if (!isObject(item)) throw wrongType(param, 'a string or a text part', item);
  if (item['type'] === 'text') {
    if (typeof item['text'] !== 'string') throw wrongType(`${param}.text`, 'a string', item['text']);
    return item['text'];
  }
  if (item['type'] === 'image_url') {
    throw invalidParameter(param, `Invalid '${param}': image inputs are not supported by this service's moderation models; send text.`);
  }
  throw invalidParameter(`${param}.type`, `Invalid '${param}.type': expected 'text', but got ${JSON.stringify(item['type'] ?? null)}.`);
}

/** Decodes and validates the body (already JSON-parsed). Throws a 400 ServiceError with a precise `param`. */
export function decodeModerationRequest(body: unknown): DecodedModerationRequest {
  if (!isObject(body)) throw invalidFormat(null, `The request body must be a JSON object, but got ${describeType(body)} instead.`);

  let model: string | null = null;
  if (body['model'] !== undefined && body['model'] !== null) {
    if (typeof body['model'] !== 'string') throw wrongType('model', 'a string', body['model']);
    if (body['model'].length === 0) throw invalidParameter('model', "Invalid 'model': the model id must not be empty.");
    model = body['model'];
  }

  const input = body['input'];
  if (input === undefined || input === null) throw missingParameter('input', "Missing required parameter: 'input'.");
  if (typeof input === 'string') return { model, inputs: capped([input]) };
  if (!Array.isArray(input)) throw wrongType('input', 'a string or an array of strings', input);
  if (input.length === 0) throw invalidParameter('input', "Invalid 'input': the array must contain at least one input.");
  if (input.length > MAX_MODERATION_INPUTS) {
    throw invalidParameter(
      'input',
      `Invalid 'input': at most ${MAX_MODERATION_INPUTS} inputs are allowed per request, but ${input.length} were given.`,
    );
  }
  return { model, inputs: capped(input.map((item: unknown, index) => decodeItem(item, `input[${index}]`))) };
}
