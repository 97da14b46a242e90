/**
 * The top-level fields of a Messages body other than `messages` and `tools`: `system`, the sampling
 * numbers, `stop_sequences`, `thinking`, `output_config` / `output_format` (JSON-schema output),
 * `metadata` and `service_tier`, each read in the Messages API's wording (SPEC codes, dotted `param`).
 */
import type { ResponseFormat } from '../../core/generation.ts';
import { invalidParameter, missingParameter } from '../../core/service-error.ts';
import { isObject, MESSAGES_WORDING as W, present, requiredObject, requiredString, wrongType } from '../shared/request-fields.ts';
import { blockObject } from './decode-messages.ts';

/** SPEC "Message-style `stop_sequences`": typically at most 5. */
export const MAX_STOP_SEQUENCES = 5;
/** SPEC "Message-style `thinking.budget_tokens`": >= 1024 (and < max_tokens). */
export const MIN_THINKING_BUDGET_TOKENS = 1024;
/** `name` of the canonical json_schema format decoded from `output_config.format` (the wire has none). */
export const OUTPUT_FORMAT_NAME = 'output';

/** SPEC: a string or an array of text blocks; the blocks are joined with newlines into the canonical system text. */
export function decodeSystem(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw wrongType('system', 'a string or an array of text blocks', value, W);
  return value
    .map((raw, index) => {
      const path = `system[${index}]`;
      const block = blockObject(raw, path);
      const type = requiredString(block, 'type', `${path}.type`, W);
      if (type !== 'text') throw invalidParameter(`${path}.type`, `System blocks must be text blocks, got '${type}'.`);
      return requiredString(block, 'text', `${path}.text`, W);
    })
    .join('\n');
}

export function decodeStopSequences(value: unknown): string[] {
  if (!Array.isArray(value)) throw wrongType('stop_sequences', 'an array of strings', value, W);
  if (value.length > MAX_STOP_SEQUENCES) {
    throw invalidParameter('stop_sequences', `'stop_sequences' may hold at most ${MAX_STOP_SEQUENCES} entries, got ${value.length}.`);
  }
  return value.map((entry, index) => {
    const path = `stop_sequences[${index}]`;
    if (typeof entry !== 'string') throw wrongType(path, 'a string', entry, W);
    if (entry === '') throw invalidParameter(path, `'${path}' must not be empty.`);
    return entry;
  });
}

/**
 * SPEC: `type` must be `enabled`, with `budget_tokens` >= 1024 and < max_tokens. Anthropic's `disabled` is
 * accepted and means no thinking. Returns the budget, or undefined for no thinking.
 */
export function decodeThinking(value: unknown, maxOutputTokens: number | undefined): number | undefined {
  if (!isObject(value)) throw wrongType('thinking', 'an object', value, W);
  const type = requiredString(value, 'type', 'thinking.type', W);
  if (type === 'disabled') return undefined;
  if (type !== 'enabled') throw invalidParameter('thinking.type', `'thinking.type' must be 'enabled' (or 'disabled'), got '${type}'.`);
  const budget = present(value['budget_tokens']);
  if (budget === undefined) throw missingParameter('thinking.budget_tokens');
  const budgetTokens = integerAtLeast(budget, 'thinking.budget_tokens', MIN_THINKING_BUDGET_TOKENS);
  if (maxOutputTokens !== undefined && budgetTokens >= maxOutputTokens) {
    throw invalidParameter(
      'thinking.budget_tokens',
      `'thinking.budget_tokens' (${budgetTokens}) must be less than 'max_tokens' (${maxOutputTokens}).`,
    );
  }
  return budgetTokens;
}

/**
 * `output_config` (`{format: {type: 'json_schema', schema}}`) or the older beta `output_format`
 * (`{type: 'json_schema', schema}`) -> the canonical json_schema response format. Only `format` is
 * honoured in `output_config`; `effort` and other members are refused rather than dropped.
 */
export function decodeOutputFormat(outputConfig: unknown, outputFormat: unknown): ResponseFormat | undefined {
  if (outputConfig !== undefined && outputFormat !== undefined) {
    throw invalidParameter('output_format', "Send either 'output_config.format' or 'output_format' (its older spelling), not both.");
  }
  if (outputFormat !== undefined) return decodeJsonOutputFormat(outputFormat, 'output_format');
  if (outputConfig === undefined) return undefined;
  if (!isObject(outputConfig)) throw wrongType('output_config', 'an object', outputConfig, W);
  for (const key of Object.keys(outputConfig)) {
    if (key !== 'format' && present(outputConfig[key]) !== undefined) {
      throw invalidParameter(
        `output_config.${key}`,
        `'output_config.${key}' is not supported by this service; only 'output_config.format' is.`,
      );
    }
  }
  const format = present(outputConfig['format']);
  return format === undefined ? undefined : decodeJsonOutputFormat(format, 'output_config.format');
}

function decodeJsonOutputFormat(value: unknown, path: string): ResponseFormat {
  if (!isObject(value)) throw wrongType(path, 'an object', value, W);
  const type = requiredString(value, 'type', `${path}.type`, W);
  if (type !== 'json_schema') throw invalidParameter(`${path}.type`, `'${path}.type' must be 'json_schema', got '${type}'.`);
  const schema = requiredObject(value, 'schema', `${path}.schema`, W);
  return { type: 'json_schema', name: OUTPUT_FORMAT_NAME, schema };
}

/** `metadata.user_id` becomes the canonical end-user id; other string entries are kept as metadata. */
export function decodeMetadata(value: unknown): { user?: string; rest: Record<string, string> } {
  if (!isObject(value)) throw wrongType('metadata', 'an object', value, W);
  const result: { user?: string; rest: Record<string, string> } = { rest: {} };
  for (const [key, entry] of Object.entries(value)) {
    if (entry === null || entry === undefined) continue;
    if (typeof entry !== 'string') throw wrongType(`metadata.${key}`, 'a string', entry, W);
    if (key === 'user_id') result.user = entry;
    else result.rest[key] = entry;
  }
  return result;
}

export function integerAtLeast(value: unknown, path: string, minimum: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw wrongType(path, 'an integer', value, W);
  if (!Number.isInteger(value)) throw invalidParameter(path, `'${path}' must be an integer, got ${value}.`);
  if (value < minimum) throw invalidParameter(path, `'${path}' must be >= ${minimum}, got ${value}.`);
  return value;
}

/** SPEC: temperature and top_p are 0.0 to 1.0 (`compatible`: temperature up to 2). */
export function numberInRange(value: unknown, path: string, maximum: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw wrongType(path, 'a number', value, W);
  if (value < 0 || value > maximum) throw invalidParameter(path, `'${path}' must be between 0.0 and ${maximum.toFixed(1)}, got ${value}.`);
  return value;
}

/** Anthropic `service_tier` as sent (default `auto`). */
export function decodeServiceTier(value: unknown): 'auto' | 'standard_only' {
  if (value === undefined) return 'auto';
  if (typeof value !== 'string') throw wrongType('service_tier', 'a string', value, W);
  if (value !== 'auto' && value !== 'standard_only') {
    throw invalidParameter('service_tier', `'service_tier' must be 'auto' or 'standard_only', got '${value}'.`);
  }
  return value;
}
