/**
 * Converts a client's JSON Schema (draft 2020-12 / OpenAI `response_format.json_schema.schema`) into the
 * subset node-llama-cpp turns into a grammar (node-llama-cpp 3.x, `dist/utils/gbnfJson/types.d.ts`,
 * `GbnfJsonSchema`). That subset reads some schemas differently from JSON Schema, so feeding it the raw
 * schema would silently generate wrong output (measured: `anyOf` and schemas without `type` become
 * the literal `null`, `$ref` outside `#/$defs/` becomes "any"). Here:
 *
 * - `anyOf` becomes `oneOf` (generating one branch satisfies either); `allOf` of one schema is inlined;
 * - `definitions` become `$defs` and their `$ref`s are rewritten; other references are rejected;
 * - a missing `type` is inferred (`properties` -> object, `items` -> array), an empty schema means
 *   any JSON value, `type: [object, null]` and similar become `oneOf`;
 * - constraints the grammar cannot enforce (`pattern`, numeric bounds, other `format`s, ...) are
 *   dropped and reported, so the caller can log a warning;
 * - keywords that change the structure and cannot be honoured (`not`, `if`, `patternProperties`, ...)
 *   throw a SchemaConversionError, which the caller turns into a 400.
 *
 * node-llama-cpp makes every listed property required and forbids unlisted ones unless
 * `additionalProperties` says otherwise: output that satisfies this stricter reading satisfies the
 * client's schema too.
 */
import type { GbnfJsonSchema } from 'node-llama-cpp';

export class SchemaConversionError extends Error {}

export interface ConvertedJsonSchema {
  schema: GbnfJsonSchema;
  /** Keywords present in the client schema that the grammar does not enforce, e.g. `pattern`. */
  unenforcedKeywords: string[];
}

type SchemaObject = Record<string, unknown>;

const SIMPLE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const ALL_TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'];
const SUPPORTED_FORMATS = new Set(['date-time', 'date', 'time']);

/** Annotations that constrain nothing. */
const ANNOTATIONS = new Set([
  'title',
  'description',
  '$schema',
  '$id',
  '$comment',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'required',
  'strict',
  'nullable',
]);
/** Value constraints a grammar of this subset cannot express: dropped and reported. */
const UNENFORCED = new Set([
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'propertyNames',
  'dependentRequired',
  'contentEncoding',
  'contentMediaType',
]);
/** Keywords this converter maps. */
const MAPPED = new Set([
  'type',
  'properties',
  'additionalProperties',
  'minProperties',
  'maxProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  '$defs',
  'definitions',
  'minLength',
  'maxLength',
]);

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Converter {
  readonly unenforced = new Set<string>();

  convert(node: unknown, path: string): GbnfJsonSchema {
    if (node === true) return this.anyValue();
    if (node === false) throw new SchemaConversionError(`${path} is the schema 'false', which no value satisfies.`);
    if (!isObject(node)) throw new SchemaConversionError(`${path} must be a JSON Schema object.`);
    for (const key of Object.keys(node)) {
      if (ANNOTATIONS.has(key) || MAPPED.has(key)) continue;
      if (UNENFORCED.has(key)) {
        if (key !== 'format' || !SUPPORTED_FORMATS.has(String(node['format']))) this.unenforced.add(key);
        continue;
      }
      throw new SchemaConversionError(`the keyword '${key}' (at ${path}) is not supported.`);
    }
    const description = typeof node['description'] === 'string' ? { description: node['description'] } : {};

    if (node['$ref'] !== undefined) return { $ref: this.reference(node['$ref'], path), ...description } as GbnfJsonSchema;
    if (node['const'] !== undefined) return { const: node['const'] as string, ...description };
    if (Array.isArray(node['enum'])) return { enum: node['enum'] as string[], ...description };

    const alternatives = node['oneOf'] ?? node['anyOf'];
    if (alternatives !== undefined) {
      if (!Array.isArray(alternatives) || alternatives.length === 0)
        throw new SchemaConversionError(`${path}.anyOf/oneOf must be a non-empty array.`);
      return { oneOf: alternatives.map((alternative, index) => this.convert(alternative, `${path}.oneOf[${index}]`)), ...description };
    }
    if (node['allOf'] !== undefined) {
      const all = node['allOf'];
      if (!Array.isArray(all) || all.length !== 1)
        throw new SchemaConversionError(`${path}.allOf with more than one schema is not supported.`);
      return this.convert(all[0], `${path}.allOf[0]`);
    }

    const types = this.types(node, path);
    if (types === ALL_TYPES) return { ...this.anyValue(), ...description } as GbnfJsonSchema;
    if (types.length === 1) return this.convertTyped(node, types[0]!, path, description);
    const simple = types.filter((type) => SIMPLE_TYPES.has(type));
    const branches: GbnfJsonSchema[] = [];
    if (simple.length > 0) branches.push({ type: simple as Array<'string' | 'number' | 'integer' | 'boolean' | 'null'> });
    for (const type of types) if (!SIMPLE_TYPES.has(type)) branches.push(this.convertTyped(node, type, path, {}));
    return branches.length === 1 ? branches[0]! : { oneOf: branches, ...description };
  }

  private types(node: SchemaObject, path: string): string[] {
    const type = node['type'];
    if (type === undefined) {
      if (node['properties'] !== undefined || node['additionalProperties'] !== undefined) return ['object'];
      if (node['items'] !== undefined || node['prefixItems'] !== undefined) return ['array'];
      if (node['minLength'] !== undefined || node['maxLength'] !== undefined) return ['string'];
      return ALL_TYPES;
    }
    const list = Array.isArray(type) ? type : [type];
    for (const entry of list) {
      if (typeof entry !== 'string' || !ALL_TYPES.includes(entry))
        throw new SchemaConversionError(`${path}.type '${String(entry)}' is not a JSON Schema type.`);
    }
    if (list.length === 0) throw new SchemaConversionError(`${path}.type must not be empty.`);
    return list as string[];
  }

  private convertTyped(node: SchemaObject, type: string, path: string, description: { description?: string }): GbnfJsonSchema {
    switch (type) {
      case 'object': {
        const properties: Record<string, GbnfJsonSchema> = {};
        if (node['properties'] !== undefined) {
          if (!isObject(node['properties'])) throw new SchemaConversionError(`${path}.properties must be an object.`);
          for (const [name, property] of Object.entries(node['properties']))
            properties[name] = this.convert(property, `${path}.properties.${name}`);
        }
        const additional = node['additionalProperties'];
        const result: Record<string, unknown> = { type: 'object', properties, ...description };
        // JSON Schema allows any extra property when `additionalProperties` is absent; an object with no
        // declared properties would otherwise only ever be `{}`.
        if (additional === true || (additional === undefined && node['properties'] === undefined)) result['additionalProperties'] = true;
        else if (isObject(additional)) result['additionalProperties'] = this.convert(additional, `${path}.additionalProperties`);
        for (const key of ['minProperties', 'maxProperties']) if (typeof node[key] === 'number') result[key] = node[key];
        return result as GbnfJsonSchema;
      }
      case 'array': {
        const result: Record<string, unknown> = { type: 'array', ...description };
        if (node['items'] !== undefined && node['items'] !== true) result['items'] = this.convert(node['items'], `${path}.items`);
        if (Array.isArray(node['prefixItems'])) {
          result['prefixItems'] = node['prefixItems'].map((item, index) => this.convert(item, `${path}.prefixItems[${index}]`));
        }
        for (const key of ['minItems', 'maxItems']) if (typeof node[key] === 'number') result[key] = node[key];
        return result as GbnfJsonSchema;
      }
      case 'string': {
        const result: Record<string, unknown> = { type: 'string', ...description };
        if (typeof node['format'] === 'string' && SUPPORTED_FORMATS.has(node['format'])) result['format'] = node['format'];
        else for (const key of ['minLength', 'maxLength']) if (typeof node[key] === 'number') result[key] = node[key];
        return result as GbnfJsonSchema;
      }
      default:
        return { type: type as 'number' | 'integer' | 'boolean' | 'null', ...description };
    }
  }

  private reference(value: unknown, path: string): string {
    if (typeof value === 'string') {
      const match = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(value);
      if (match !== null) return `#/$defs/${match[1]!}`;
    }
    throw new SchemaConversionError(
      `${path}.$ref must point into the root's '$defs' or 'definitions' (e.g. '#/$defs/Name'), got ${JSON.stringify(value)}.`,
    );
  }

  /** Any JSON value, spelled in the subset (an empty schema would mean `null` there). */
  anyValue(): GbnfJsonSchema {
    return {
      oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'object', additionalProperties: true }, { type: 'array' }],
    } as GbnfJsonSchema;
  }
}

/** Throws SchemaConversionError (message: what and where) for a schema that cannot become a grammar. */
export function convertToLlamaCppJsonSchema(schema: Record<string, unknown>): ConvertedJsonSchema {
  const converter = new Converter();
  const definitions = schema['$defs'] ?? schema['definitions'];
  const root = converter.convert(schema, 'schema');
  if (definitions !== undefined) {
    if (!isObject(definitions)) throw new SchemaConversionError('schema.$defs must be an object.');
    const converted: Record<string, GbnfJsonSchema> = {};
    for (const [name, definition] of Object.entries(definitions)) converted[name] = converter.convert(definition, `schema.$defs.${name}`);
    // node-llama-cpp resolves `#/$defs/...` against the `$defs` of the schema that holds the reference's ancestors; the root holds them all.
    (root as Record<string, unknown>)['$defs'] = converted;
  }
  return { schema: root, unenforcedKeywords: [...converter.unenforced].sort() };
}
