/**
 * Field validation shared by the request decoders (chat completions, responses, messages, embeddings,
 * moderations, images): each helper reads one field, returns it typed, or throws the SPEC 400 with the
 * field's dotted `param` (`invalid_format` for a wrong JSON type, `invalid_parameter` for a value out
 * of range, `missing_parameter` when required and absent; `null` counts as absent). Messages follow the
 * format's own API: OpenAI's wording by default, the Messages API's where a reader is given
 * `MESSAGES_WORDING` (the wording table below). `param` defaults to the key for top-level fields.
 */
import { invalidFormat, invalidParameter, missingParameter, type ServiceError } from '../../core/service-error.ts';

/** A parsed JSON object. */
export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `null` counts as absent: the value, or undefined for null. */
export function present(value: unknown): unknown {
  return value === null ? undefined : value;
}

/** The JSON type name of a value, as OpenAI's own messages spell it. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

/** The JSON type name of a value as the Messages API words it (every number is 'a number'). */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/**
 * How one client format words (and, for malformed strings, classifies) the errors the shared readers and
 * part rules (decode-parts.ts) throw. Each format's clients read messages in its upstream API's style.
 */
export interface FieldWording {
  /** A value's JSON type in a message ('a string', 'an object', ...). */
  describe(value: unknown): string;
  /** The `invalid_format` message for a value of the wrong JSON type; `expected` is e.g. 'a string'. */
  wrongType(param: string, expected: string, value: unknown): string;
  /**
   * The code of a string of the right type in a malformed shape (an image URL, a data URL, base64):
   * the OpenAI-style decoders answer `invalid_parameter` (a value not allowed), the Messages decoder
   * `invalid_format` (a malformed value), each as its tests and README state.
   */
  malformedCode: 'invalid_parameter' | 'invalid_format';
  /** An image URL that is neither http(s) nor a base64 `data:image/...` URL. */
  badImageUrl(param: string): string;
  /** A `data:` image URL that is not `data:image/<type>;base64,<data>`. */
  badImageDataUrl(param: string): string;
  /** File data that is not a base64 data URL. */
  badFileData(param: string): string;
  /** A URL that must be http(s) (documents, files, Anthropic url sources). */
  badHttpUrl(param: string): string;
  /** Raw base64 data (Anthropic `source.data`) that is not base64. */
  badBase64(param: string): string;
}

/** OpenAI's wording (chat completions, responses, embeddings, moderations, images). */
export const OPENAI_WORDING: FieldWording = {
  describe: describeType,
  wrongType: (param, expected, value) => `Invalid type for '${param}': expected ${expected}, but got ${describeType(value)} instead.`,
  malformedCode: 'invalid_parameter',
  badImageUrl: (param) => `Invalid '${param}': expected an http(s) URL or a base64 'data:image/...;base64,' URL.`,
  badImageDataUrl: (param) => `Invalid '${param}': expected a base64 image data URL such as 'data:image/png;base64,...'.`,
  badFileData: (param) => `Invalid '${param}': expected a base64 data URL such as 'data:application/pdf;base64,...'.`,
  badHttpUrl: (param) => `Invalid '${param}': expected an http(s) URL.`,
  badBase64: (param) => `Invalid '${param}': expected base64 data.`,
};

/** The Anthropic Messages API's wording (`/v1/messages`). */
export const MESSAGES_WORDING: FieldWording = {
  describe: describeJsonType,
  wrongType: (param, expected, value) => `'${param}' must be ${expected}, got ${describeJsonType(value)}.`,
  malformedCode: 'invalid_format',
  badImageUrl: (param) => `'${param}' must be an http(s) URL or a 'data:image/<type>;base64,<data>' URL.`,
  badImageDataUrl: (param) => `'${param}' must be an http(s) URL or a 'data:image/<type>;base64,<data>' URL.`,
  badFileData: (param) => `'${param}' must be a base64 data URL such as 'data:application/pdf;base64,...'.`,
  badHttpUrl: (param) => `'${param}' must be an http(s) URL.`,
  badBase64: (param) => `'${param}' must be base64 data (without a 'data:' prefix).`,
};

export function wrongType(param: string, expected: string, value: unknown, wording: FieldWording = OPENAI_WORDING): ServiceError {
  return invalidFormat(param, wording.wrongType(param, expected, value));
}

/** The 400 for a string of the right type in a malformed shape, with the format's code (FieldWording). */
export function malformedValue(param: string, message: string, wording: FieldWording): ServiceError {
  return wording.malformedCode === 'invalid_format' ? invalidFormat(param, message) : invalidParameter(param, message);
}

export function expectObject(value: unknown, param: string, wording: FieldWording = OPENAI_WORDING): JsonObject {
  if (!isObject(value)) throw wrongType(param, 'an object', value, wording);
  return value;
}

export function requiredString(object: JsonObject, key: string, param: string, wording: FieldWording = OPENAI_WORDING): string {
  const value = object[key];
  if (value === undefined || value === null) throw missingParameter(param);
  if (typeof value !== 'string') throw wrongType(param, 'a string', value, wording);
  return value;
}

export function optionalString(object: JsonObject, key: string, param = key, wording: FieldWording = OPENAI_WORDING): string | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw wrongType(param, 'a string', value, wording);
  return value;
}

export function requiredObject(object: JsonObject, key: string, param: string, wording: FieldWording = OPENAI_WORDING): JsonObject {
  const value = object[key];
  if (value === undefined || value === null) throw missingParameter(param);
  return expectObject(value, param, wording);
}

export function optionalArray(object: JsonObject, key: string, param: string): unknown[] {
  const value = object[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw wrongType(param, 'an array', value);
  return value;
}

export function optionalBoolean(object: JsonObject, key: string, param = key): boolean | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw wrongType(param, 'a boolean', value);
  return value;
}

export function optionalNumberInRange(object: JsonObject, key: string, minimum: number, maximum: number, param = key): number | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw wrongType(param, 'a number', value);
  if (value < minimum) throw invalidParameter(param, `Invalid '${param}': ${value} is less than the minimum of ${minimum.toFixed(1)}.`);
  if (value > maximum) throw invalidParameter(param, `Invalid '${param}': ${value} is greater than the maximum of ${maximum.toFixed(1)}.`);
  return value;
}

export function optionalInteger(object: JsonObject, key: string, param = key): number | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw wrongType(param, 'an integer', value);
  if (!Number.isSafeInteger(value)) throw invalidParameter(param, `Invalid '${param}': expected an integer, got ${value}.`);
  return value;
}

export function optionalPositiveInteger(object: JsonObject, key: string, param = key): number | undefined {
  const value = optionalInteger(object, key, param);
  if (value !== undefined && value < 1) throw invalidParameter(param, `Invalid '${param}': ${value} is less than the minimum of 1.`);
  return value;
}

export function optionalEnum<const Values extends readonly string[]>(
  object: JsonObject,
  key: string,
  values: Values,
  param = key,
): Values[number] | undefined {
  const value = optionalString(object, key, param);
  if (value === undefined) return undefined;
  if (!values.includes(value)) {
    throw invalidParameter(param, `Invalid '${param}': '${value}' is not one of ${values.map((item) => `'${item}'`).join(', ')}.`);
  }
  return value;
}

/** SPEC: `metadata` holds at most 16 pairs; OpenAI's key and value lengths. */
export const MAX_METADATA_PAIRS = 16;
export const MAX_METADATA_KEY_LENGTH = 64;
export const MAX_METADATA_VALUE_LENGTH = 512;

/** `metadata`: an object of at most 16 string pairs (keys <= 64, values <= 512 characters); undefined when absent. */
export function optionalMetadata(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  const metadata = expectObject(value, 'metadata');
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_PAIRS) {
    throw invalidParameter(
      'metadata',
      `Invalid 'metadata': at most ${MAX_METADATA_PAIRS} key-value pairs are allowed, got ${entries.length}.`,
    );
  }
  const result: Record<string, string> = {};
  for (const [key, item] of entries) {
    const param = `metadata.${key}`;
    if (key.length > MAX_METADATA_KEY_LENGTH) {
      throw invalidParameter(
        param,
        `Invalid 'metadata': the key '${key.slice(0, 20)}...' is longer than ${MAX_METADATA_KEY_LENGTH} characters.`,
      );
    }
    if (typeof item !== 'string') throw wrongType(param, 'a string', item);
    if (item.length > MAX_METADATA_VALUE_LENGTH)
      throw invalidParameter(param, `Invalid '${param}': values are at most ${MAX_METADATA_VALUE_LENGTH} characters.`);
    result[key] = item;
  }
  return result;
}
