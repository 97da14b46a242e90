/**
 * The nesting limit of request JSON. `JSON.parse` reads any depth, but later steps that recurse over
 * a value (`JSON.stringify` of a tool's `parameters` or a `json_schema`, schema walkers, structured
 * clone) overflow the stack at a few thousand levels: a 10,000-deep body was a 500. No real request
 * comes near the limit (OpenAI's structured outputs allow 10 levels of schema nesting).
 *
 * The check walks the parsed value, not the text: it visits each object and array once and never
 * looks at string contents, so an ordinary body (a few dozen containers) costs well under a
 * microsecond, and it recurses at most MAX_JSON_DEPTH + 1 frames whatever the input.
 */

/** Deepest nesting of objects and arrays a request body may have: the body itself is level 1. */
export const MAX_JSON_DEPTH = 64;

/** Path segments kept in the `param` of a too-deep value (its first, outermost parameters). */
const PARAM_SEGMENTS = 6;
/** Longest key kept in a path segment, characters (a hostile key can be megabytes long). */
const MAX_KEY_LENGTH = 64;

/** Path of a container nested deeper than `remaining` more levels, innermost segment first; undefined when none is. */
function tooDeep(value: object, remaining: number): Array<string | number> | undefined {
  if (remaining === 0) return [];
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      if (typeof item !== 'object' || item === null) continue;
      const path = tooDeep(item, remaining - 1);
      if (path !== undefined) {
        path.push(index);
        return path;
      }
    }
    return undefined;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (typeof item !== 'object' || item === null) continue;
    const path = tooDeep(item, remaining - 1);
    if (path !== undefined) {
      path.push(key);
      return path;
    }
  }
  return undefined;
}

/** `tools[0].function.parameters` from its segments. */
function formatPath(segments: ReadonlyArray<string | number>, prefix: string): string {
  let text = prefix;
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else {
      const key = segment.length > MAX_KEY_LENGTH ? `${segment.slice(0, MAX_KEY_LENGTH)}…` : segment;
      text += text === '' ? key : `.${key}`;
    }
  }
  return text;
}

/** Where a value nests too deep: `param` names its outermost parameters (e.g. `tools[0].function.parameters`). */
export interface TooDeepValue {
  param: string | null;
  message: string;
}

/**
 * Undefined when `value` nests at most `maxDepth` levels of objects and arrays; otherwise the
 * parameter under which it goes deeper, as a `param` (prefixed with `prefix`, e.g. `body` for a batch
 * line) and a message for a 400.
 */
export function findTooDeepValue(value: unknown, maxDepth = MAX_JSON_DEPTH, prefix = ''): TooDeepValue | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const path = tooDeep(value, maxDepth);
  if (path === undefined) return undefined;
  const outermost = path.reverse().slice(0, PARAM_SEGMENTS);
  const param = formatPath(outermost, prefix);
  return {
    param: param === '' ? null : param,
    message: `Invalid '${param === '' ? 'body' : param}': JSON objects and arrays may be nested at most ${maxDepth} levels deep, and this value is nested deeper.`,
  };
}
