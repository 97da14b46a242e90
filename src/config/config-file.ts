/**
 * The config file layer (`SWITCHYARD_CONFIG`, YAML or JSON) and how the layers merge: defaults < file <
 * environment < explicit overrides (load-config.ts), and how a validation issue's path is named.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { ConfigError } from './config-error.ts';

/**
 * The YAML parser, loaded when a YAML config file is read (synchronously: yaml ships CommonJS too). An
 * instance configured by JSON or the environment alone does not keep its ~1 MB of heap.
 */
function parseYaml(text: string): unknown {
  const yaml = createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yaml.parse(text);
}

export function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read the config file ${path} (${(error as Error).message}). Check SWITCHYARD_CONFIG.`);
  }
  try {
    return path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(`The config file ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sections the environment sets field by field: a file's other fields of the same section stay. */
const MERGED_SECTIONS = new Set(['server', 'batches', 'limits', 'routingState', 'dependencies', 'tracing', 'alerts']);
/** Merged sections whose object fields merge key by key too (`alerts.webhooks`, `alerts.delivery`). */
const NESTED_MERGED_SECTIONS = new Set(['alerts']);

/** `value` over `existing`, key by key; one level deeper for the object fields when `nested`. */
function mergeSection(existing: Record<string, unknown>, value: Record<string, unknown>, nested: boolean): Record<string, unknown> {
  const merged = { ...existing, ...value };
  if (!nested) return merged;
  for (const [key, field] of Object.entries(value)) {
    const before = existing[key];
    if (isPlainObject(before) && isPlainObject(field)) merged[key] = { ...before, ...field };
  }
  return merged;
}

/** Later layers win; the sections above merge key by key, everything else is replaced. */
export function mergeLayers(...layers: unknown[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const layer of layers) {
    if (!isPlainObject(layer)) continue;
    for (const [key, value] of Object.entries(layer)) {
      const existing = merged[key];
      merged[key] =
        isPlainObject(existing) && isPlainObject(value) && MERGED_SECTIONS.has(key)
          ? mergeSection(existing, value, NESTED_MERGED_SECTIONS.has(key))
          : value;
    }
  }
  return merged;
}

export function describeIssuePath(path: ReadonlyArray<PropertyKey>): string {
  return (
    path.map((segment, index) => (typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`)).join('') ||
    '(root)'
  );
}
