/**
 * Validates a response body against a component schema vendored from a published OpenAPI document
 * (test/fixtures/openapi/, see its README). A small JSON Schema check for the keywords those documents
 * use: `$ref`, `type` (and OpenAPI 3.0's `nullable`), `enum`, `const`, `properties`, `required`,
 * `additionalProperties`, `items`, `allOf`, `anyOf`, `oneOf` (with `discriminator` when given), numeric and
 * length bounds, `pattern`. Annotations (`description`, `default`, `format`, `example`, `x-*`) are ignored.
 * Returns the failures as `path: reason` lines; empty means the body conforms.
 */
import { readFileSync } from 'node:fs';

type Schema = Record<string, unknown>;

export interface VendoredSchemas {
  source: { file: string; title: string | null; version: string | null; sha256: string };
  schemas: Record<string, Schema>;
}

/** Loads a fixture written by scripts/vendor-openapi-schemas.mjs. */
export function loadVendoredSchemas(fixture: 'openai' | 'anthropic'): VendoredSchemas {
  const url = new URL(`../fixtures/openapi/${fixture}-schemas.json`, import.meta.url);
  const parsed = JSON.parse(readFileSync(url, 'utf8')) as {
    'x-source': VendoredSchemas['source'];
    components: { schemas: Record<string, Schema> };
  };
  return { source: parsed['x-source'], schemas: parsed.components.schemas };
}

/** The failures of `value` against `schemas[name]`. */
export function checkAgainst(vendored: VendoredSchemas, name: string, value: unknown): string[] {
  const schema = vendored.schemas[name];
  if (schema === undefined) throw new Error(`${vendored.source.file} fixture has no schema ${name}`);
  const failures: string[] = [];
  check(vendored, schema, value, '$', failures);
  return failures;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(expected: string, actual: string): boolean {
  return expected === actual || (expected === 'number' && actual === 'integer');
}

function resolve(vendored: VendoredSchemas, reference: string): Schema {
  const name = reference.replace('#/components/schemas/', '');
  const schema = vendored.schemas[name];
  if (schema === undefined) throw new Error(`unresolved $ref ${reference}`);
  return schema;
}

function failuresOf(vendored: VendoredSchemas, schema: Schema, value: unknown, path: string): string[] {
  const failures: string[] = [];
  check(vendored, schema, value, path, failures);
  return failures;
}

function check(vendored: VendoredSchemas, schema: Schema, value: unknown, path: string, failures: string[]): void {
  if (typeof schema['$ref'] === 'string') check(vendored, resolve(vendored, schema['$ref']), value, path, failures);
  const actual = typeOf(value);
  if (value === null && schema['nullable'] === true) return;
  if (schema['type'] !== undefined) {
    const types = Array.isArray(schema['type']) ? (schema['type'] as string[]) : [schema['type'] as string];
    if (!types.some((type) => typeMatches(type, actual))) {
      failures.push(`${path}: expected ${types.join(' or ')}, got ${actual} (${JSON.stringify(value)})`);
      return;
    }
  }
  if ('const' in schema && JSON.stringify(schema['const']) !== JSON.stringify(value))
    failures.push(`${path}: expected ${JSON.stringify(schema['const'])}, got ${JSON.stringify(value)}`);
  if (Array.isArray(schema['enum']) && !schema['enum'].some((option) => JSON.stringify(option) === JSON.stringify(value)))
    failures.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema['enum'])}`);
  checkBounds(schema, value, path, failures);
  for (const part of (schema['allOf'] as Schema[] | undefined) ?? []) check(vendored, part, value, path, failures);
  if (Array.isArray(schema['anyOf'])) {
    const results = (schema['anyOf'] as Schema[]).map((option) => failuresOf(vendored, option, value, path));
    if (!results.some((result) => result.length === 0)) failures.push(`${path}: matches no anyOf option: ${closest(results)}`);
  }
  if (Array.isArray(schema['oneOf'])) checkOneOf(vendored, schema, value, path, failures);
  if (actual === 'object') checkObject(vendored, schema, value as Record<string, unknown>, path, failures);
  if (actual === 'array' && typeof schema['items'] === 'object' && schema['items'] !== null)
    (value as unknown[]).forEach((item, index) => check(vendored, schema['items'] as Schema, item, `${path}[${index}]`, failures));
}

function closest(results: string[][]): string {
  const best = [...results].sort((left, right) => left.length - right.length)[0] ?? [];
  return best.join('; ');
}

function checkOneOf(vendored: VendoredSchemas, schema: Schema, value: unknown, path: string, failures: string[]): void {
  const discriminator = schema['discriminator'] as { propertyName: string; mapping?: Record<string, string> } | undefined;
  if (discriminator?.mapping !== undefined && typeof value === 'object' && value !== null) {
    const tag = (value as Record<string, unknown>)[discriminator.propertyName];
    const reference = typeof tag === 'string' ? discriminator.mapping[tag] : undefined;
    if (reference === undefined)
      failures.push(
        `${path}.${discriminator.propertyName}: ${JSON.stringify(tag)} is not one of ${Object.keys(discriminator.mapping).join(', ')}`,
      );
    else check(vendored, resolve(vendored, reference), value, path, failures);
    return;
  }
  const results = (schema['oneOf'] as Schema[]).map((option) => failuresOf(vendored, option, value, path));
  const matching = results.filter((result) => result.length === 0).length;
  if (matching !== 1)
    failures.push(`${path}: matches ${matching} oneOf options, not exactly one${matching === 0 ? `: ${closest(results)}` : ''}`);
}

function checkObject(vendored: VendoredSchemas, schema: Schema, value: Record<string, unknown>, path: string, failures: string[]): void {
  const properties = (schema['properties'] as Record<string, Schema> | undefined) ?? {};
  for (const name of (schema['required'] as string[] | undefined) ?? [])
    if (!(name in value)) failures.push(`${path}: required property '${name}' is missing`);
  for (const [name, inner] of Object.entries(value)) {
    const propertySchema = properties[name];
    if (propertySchema !== undefined) check(vendored, propertySchema, inner, `${path}.${name}`, failures);
    else if (schema['additionalProperties'] === false) failures.push(`${path}: property '${name}' is not allowed`);
    else if (typeof schema['additionalProperties'] === 'object' && schema['additionalProperties'] !== null)
      check(vendored, schema['additionalProperties'] as Schema, inner, `${path}.${name}`, failures);
  }
}

function checkBounds(schema: Schema, value: unknown, path: string, failures: string[]): void {
  if (typeof value === 'number') {
    if (typeof schema['minimum'] === 'number' && value < schema['minimum'])
      failures.push(`${path}: ${value} < minimum ${schema['minimum']}`);
    if (typeof schema['maximum'] === 'number' && value > schema['maximum'])
      failures.push(`${path}: ${value} > maximum ${schema['maximum']}`);
  }
  if (typeof value === 'string') {
    if (typeof schema['minLength'] === 'number' && value.length < schema['minLength'])
      failures.push(`${path}: shorter than ${schema['minLength']}`);
    if (typeof schema['maxLength'] === 'number' && value.length > schema['maxLength'])
      failures.push(`${path}: longer than ${schema['maxLength']}`);
    if (typeof schema['pattern'] === 'string' && !new RegExp(schema['pattern'], 'u').test(value))
      failures.push(`${path}: does not match ${schema['pattern']}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema['minItems'] === 'number' && value.length < schema['minItems'])
      failures.push(`${path}: fewer than ${schema['minItems']} items`);
    if (typeof schema['maxItems'] === 'number' && value.length > schema['maxItems'])
      failures.push(`${path}: more than ${schema['maxItems']} items`);
  }
}
