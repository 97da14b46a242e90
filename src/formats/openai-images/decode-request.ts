/**
 * Decodes an OpenAI `POST /v1/images/generations` body.
 *
 * Wire document: the OpenAI OpenAPI `CreateImageRequest` (docs/spec.md names the endpoint but shows no
 * shapes): `prompt` required, `model`, `n` 1-10 (default 1), `size` `WxH` or `auto`, `response_format`
 * `url` (default) | `b64_json`, `user`. Code choice as in formats/openai-chat (wrong type ->
 * `invalid_format`, not allowed -> `invalid_parameter`, absent -> `missing_parameter`; `null` counts as
 * absent); unknown fields are ignored.
 *
 * `stream: true` is refused (no image backend here streams partial images). `quality` (DALL-E
 * `standard` | `hd`, GPT-image `low` | `medium` | `high`, or `auto`) is decoded: a backend that honours it
 * gets it (and the image is priced at it), one that does not lists it as ignored (images-service.ts). The
 * other styling options (`style`, `background`, `output_format`, `output_compression`, `moderation`)
 * are accepted but not honoured; their names are returned in `ignoredParameters` so the route can warn,
 * never dropped silently.
 */
import { invalidFormat, invalidParameter, missingParameter } from '../../core/service-error.ts';
import { describeType, isObject, optionalString, wrongType } from '../shared/request-fields.ts';

/** Longest prompt, characters (OpenAI's dall-e-3 limit). */
export const DEFAULT_MAX_PROMPT_CHARACTERS = 4000;
/** Fewest and most images per request. */
export const MIN_IMAGES = 1;
export const MAX_IMAGES = 10;
/** The size used when the client names none (or `auto`) and the model allows it; else its first size. */
export const PREFERRED_IMAGE_SIZE = '1024x1024';

export type ImageResponseFormat = 'url' | 'b64_json';

/** The `quality` values of the OpenAI image models (dall-e-3: standard, hd; gpt-image: low, medium, high; both: auto). */
export const IMAGE_QUALITIES = ['auto', 'standard', 'hd', 'low', 'medium', 'high'] as const;

export interface DecodedImageGenerationRequest {
  /** The model as the client named it, or null for the service's default image model. */
  model: string | null;
  prompt: string;
  /** Number of images, 1-10. */
  n: number;
  /** `WxH` as sent, or null when absent or `auto` (resolve with `resolveImageSize`). */
  size: string | null;
  responseFormat: ImageResponseFormat;
  /** One of IMAGE_QUALITIES; absent: the backend's default. */
  quality?: string;
  /** End-user identifier. */
  user?: string;
  /** Wire names of parameters accepted but not honoured, for a warning. */
  ignoredParameters: string[];
}

const IGNORED_STYLING_PARAMETERS = ['style', 'background', 'output_format', 'output_compression', 'moderation', 'partial_images'] as const;

/**
 * Decodes and validates the body (already JSON-parsed). `maxPromptCharacters` defaults to 4000.
 * Throws a 400 ServiceError with a precise `param`.
 */
export function decodeImageGenerationRequest(body: unknown, limits: { maxPromptCharacters?: number } = {}): DecodedImageGenerationRequest {
  if (!isObject(body)) throw invalidFormat(null, `The request body must be a JSON object, but got ${describeType(body)} instead.`);
  const maxPromptCharacters = limits.maxPromptCharacters ?? DEFAULT_MAX_PROMPT_CHARACTERS;

  const model = optionalString(body, 'model') ?? null;
  if (model !== null && model.length === 0) throw invalidParameter('model', "Invalid 'model': the model id must not be empty.");

  const prompt = optionalString(body, 'prompt');
  if (prompt === undefined) throw missingParameter('prompt', "Missing required parameter: 'prompt'.");
  if (prompt.trim().length === 0) throw invalidParameter('prompt', "Invalid 'prompt': the prompt must not be empty.");
  if (prompt.length > maxPromptCharacters) {
    throw invalidParameter(
      'prompt',
      `Invalid 'prompt': the prompt may be at most ${maxPromptCharacters} characters long, but it has ${prompt.length}.`,
    );
  }

  let n = 1;
  const count = body['n'];
  if (count !== undefined && count !== null) {
    if (typeof count !== 'number') throw wrongType('n', 'an integer', count);
    if (!Number.isInteger(count) || count < MIN_IMAGES || count > MAX_IMAGES) {
      throw invalidParameter('n', `Invalid 'n': expected an integer from ${MIN_IMAGES} to ${MAX_IMAGES}, but got ${count}.`);
    }
    n = count;
  }

  let size = optionalString(body, 'size') ?? null;
  if (size === 'auto') size = null;
  if (size !== null && !/^\d+x\d+$/.test(size)) {
    throw invalidParameter('size', `Invalid 'size': expected WIDTHxHEIGHT such as '1024x1024', or 'auto', but got '${size}'.`);
  }

  const format = optionalString(body, 'response_format') ?? 'url';
  if (format !== 'url' && format !== 'b64_json') {
    throw invalidParameter('response_format', `Invalid 'response_format': expected 'url' or 'b64_json', but got '${format}'.`);
  }

  const stream = body['stream'];
  if (stream !== undefined && stream !== null) {
    if (typeof stream !== 'boolean') throw wrongType('stream', 'a boolean', stream);
    if (stream) throw invalidParameter('stream', "Invalid 'stream': streaming image generation is not supported by this service.");
  }

  const decoded: DecodedImageGenerationRequest = {
    model,
    prompt,
    n,
    size,
    responseFormat: format,
    ignoredParameters: IGNORED_STYLING_PARAMETERS.filter((name) => body[name] !== undefined && body[name] !== null),
  };
  const quality = optionalString(body, 'quality');
  if (quality !== undefined) {
    if (!(IMAGE_QUALITIES as readonly string[]).includes(quality)) {
      throw invalidParameter('quality', `Invalid 'quality': expected one of ${IMAGE_QUALITIES.join(', ')}, but got '${quality}'.`);
    }
    decoded.quality = quality;
  }
  const user = optionalString(body, 'user');
  if (user !== undefined) decoded.user = user;
  return decoded;
}

/**
 * The size to generate: the requested one when the model allows it, or (when none was requested) 1024x1024
 * if allowed, else the model's first size. A size outside `allowedSizes` is a 400 naming the allowed ones.
 * An empty `allowedSizes` means the model declares no list: any well-formed size passes.
 */
export function resolveImageSize(requested: string | null, allowedSizes: readonly string[]): string {
  if (requested === null) {
    if (allowedSizes.length === 0 || allowedSizes.includes(PREFERRED_IMAGE_SIZE)) return PREFERRED_IMAGE_SIZE;
    return allowedSizes[0]!;
  }
  if (allowedSizes.length > 0 && !allowedSizes.includes(requested)) {
    throw invalidParameter(
      'size',
      `Invalid 'size': '${requested}' is not supported by this model. Supported sizes: ${allowedSizes.join(', ')}.`,
    );
  }
  return requested;
}
