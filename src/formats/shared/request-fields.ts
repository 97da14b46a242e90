/**
 * Field validation shared by the OpenAI-style request decoders (chat completions, responses, embeddings,
 * moderations, images): each helper reads one field, returns it typed, or throws the SPEC 400 with the
 * field's dotted `param` (`invalid_format` for a wrong JSON type, `invalid_parameter` for a value out
 * of range, `missing_parameter` when required and absent). Messages follow OpenAI's own wording.
 * `param` defaults to the key for top-level fields.
 */
import { invalidFormat, invalidParameter, missingParameter, type ServiceError } from '../../core/service-error.ts';

/** A parsed JSON object. */
export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

export function wrongType(param: string, expected: string, value: unknown): ServiceError {
  return invalidFormat(param, `Invalid type for '${param}': expected ${expected}, but got ${describeType(value)} instead.`);
}

export function expectObject(value: unknown, param: string): JsonObject {
  if (!isObject(value)) throw wrongType(param, 'an object', value);
  return value;
}

export function requiredString(object: JsonObject, key: string, param: string): string {
  const value = object[key];
  if (value === undefined || value === null) throw missingParameter(param);
  if (typeof value !== 'string') throw wrongType(param, 'a string', value);
  return value;
}

export function optionalString(object: JsonObject, key: string, param = key): string | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw wrongType(param, 'a string', value);
  return value;
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

/** `data:<mediaType>[;params];base64,<data>` -> media type; undefined when not a base64 data URL. */
export function parseDataUrl(url: string): { mediaType: string } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0) return undefined;
  const header = url.slice(5, comma).split(';');
  if (!header.includes('base64')) return undefined;
  const mediaType = (header[0] ?? '').trim().toLowerCase();
  if (!/^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(mediaType)) return undefined;
  if (comma === url.length - 1) return undefined;
  return { mediaType };
}

export function isHttpUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const protocol = new URL(url).protocol;
  return protocol === 'http:' || protocol === 'https:';
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
