/**
 * Builds a deterministic JSON value that conforms to a (simple) JSON Schema (https://json-schema.org,
 * draft 2020-12 keywords: type, properties, required, items, enum, const, anyOf/oneOf/allOf, $ref to
 * local `$defs`/`definitions`, min/max bounds, string formats). Used by the echo engine for tool-call
 * arguments and JSON answers. Only `required` properties are filled; strings take the given text.
 * Schemas it does not understand yield the text itself, or `null` past a nesting limit.
 */

type Schema = Record<string, unknown>;

/** Deepest nesting followed; beyond it values are null (recursive schemas would never end). */
const MAX_DEPTH = 8;

const SAMPLE_BY_FORMAT: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '127.0.0.1',
};

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolveReference(reference: string, root: Schema): Schema | undefined {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(reference);
  if (match === null) return undefined;
  const definitions = root[match[1]!];
  const target = isSchema(definitions) ? definitions[decodeURIComponent(match[2]!)] : undefined;
  return isSchema(target) ? target : undefined;
}

function primaryType(schema: Schema): string | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((entry): entry is string => typeof entry === 'string' && entry !== 'null') ?? 'null';
  if (isSchema(schema['properties'])) return 'object';
  if (schema['items'] !== undefined) return 'array';
  return undefined;
}

function sampleString(schema: Schema, text: string): string {
  const format = typeof schema['format'] === 'string' ? SAMPLE_BY_FORMAT[schema['format']] : undefined;
  let value = format ?? text;
  const minLength = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
  const maxLength = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : undefined;
  if (value.length < minLength) value = value.padEnd(minLength, '.');
  if (maxLength !== undefined && value.length > maxLength) value = value.slice(0, maxLength);
  return value;
}

function sampleNumber(schema: Schema, integer: boolean): number {
  const minimum = typeof schema['minimum'] === 'number' ? schema['minimum'] : undefined;
  const exclusiveMinimum = typeof schema['exclusiveMinimum'] === 'number' ? schema['exclusiveMinimum'] : undefined;
  const maximum = typeof schema['maximum'] === 'number' ? schema['maximum'] : undefined;
  const exclusiveMaximum = typeof schema['exclusiveMaximum'] === 'number' ? schema['exclusiveMaximum'] : undefined;
  let value = minimum ?? (exclusiveMinimum === undefined ? 1 : exclusiveMinimum + 1);
  if (maximum !== undefined && value > maximum) value = maximum;
  if (exclusiveMaximum !== undefined && value >= exclusiveMaximum) value = exclusiveMaximum - 1;
  return integer ? Math.ceil(value) : value;
}

function sample(schema: unknown, text: string, root: Schema, depth: number): unknown {
  if (depth > MAX_DEPTH) return null;
  if (!isSchema(schema)) return text;
  if (typeof schema['$ref'] === 'string') {
    const target = resolveReference(schema['$ref'], root);
    return target === undefined ? text : sample(target, text, root, depth + 1);
  }
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][0];
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const options = schema[keyword];
    if (Array.isArray(options) && options.length > 0) {
      const chosen = options.find((option) => !(isSchema(option) && option['type'] === 'null')) ?? options[0];
      return sample(chosen, text, root, depth + 1);
    }
  }
  if (Array.isArray(schema['allOf']) && schema['allOf'].length > 0) {
    const merged: Schema = {};
    for (const part of schema['allOf']) {
      if (!isSchema(part)) continue;
      Object.assign(merged, part);
      if (isSchema(part['properties'])) merged['properties'] = { ...(merged['properties'] as Schema | undefined), ...part['properties'] };
    }
    return sample(merged, text, root, depth + 1);
  }
  switch (primaryType(schema)) {
    case 'string':
      return sampleString(schema, text);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const minItems = typeof schema['minItems'] === 'number' ? schema['minItems'] : 1;
      const maxItems = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : Number.POSITIVE_INFINITY;
      const count = Math.min(Math.max(minItems, 1), maxItems);
      const items = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : undefined;
      return Array.from({ length: items?.length ?? count }, (_, index) => sample(items?.[index] ?? schema['items'], text, root, depth + 1));
    }
    case 'object': {
      const properties = isSchema(schema['properties']) ? schema['properties'] : {};
      const required = Array.isArray(schema['required'])
        ? schema['required'].filter((name): name is string => typeof name === 'string')
        : [];
      const result: Record<string, unknown> = {};
      for (const name of required) result[name] = sample(properties[name], text, root, depth + 1);
      return result;
    }
    default:
      return text;
  }
}

/** A value conforming to `schema`, strings filled with `text`. */
export function sampleFromJsonSchema(schema: unknown, text: string): unknown {
  return sample(schema, text, isSchema(schema) ? schema : {}, 0);
}
