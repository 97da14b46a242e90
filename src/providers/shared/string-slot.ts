/**
 * Streaming upstreams send most events as the same JSON text with one string changed: an OpenAI chunk's
 * `delta.content`, an Anthropic `content_block_delta`'s `delta.text`. Parsing each of them builds the
 * same object graph only to read that string. A StringSlot is such a text with the string cut out,
 * learnt from one event that was parsed in full: an event whose text is the same prefix, one JSON string
 * literal and the same suffix *is* the learnt event with another string in that place, so its reading
 * is the learnt reading with the new string. `match` tells whether a text is one of those, and gives
 * its string, by comparing slices, without a parse.
 *
 * A slot is only made when a probe proves it: the text with a sentinel string in the slot must read,
 * through the provider's own reader, as the sentinel in the field the provider will fill. So a key
 * written twice, or with escapes, or in another object can never put the wrong string in a reading.
 * What counts as an event worth learning from, and how a matched string becomes a reading, is the
 * provider's (openai-compatible/chunk-template.ts, anthropic/delta-template.ts).
 */
import { parseJson } from './lenient-json.ts';

/** The sentinel string, and its literal in the probe's JSON text. */
const SENTINEL = '\u0001';
const SENTINEL_LITERAL = '"\\u0001"';
const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;

export class StringSlot {
  private constructor(
    private readonly prefix: string,
    private readonly suffix: string,
  ) {}

  /**
   * The slot of the first `"key":` whose value is a string literal in `data`, when `proves` accepts
   * the probe: the JSON value of the text with a sentinel in the slot, and that sentinel.
   */
  static find(data: string, key: string, proves: (probe: unknown, sentinel: string) => boolean): StringSlot | undefined {
    const literal = findValueLiteral(data, key);
    if (literal === undefined) return undefined;
    const prefix = data.slice(0, literal.start);
    const suffix = data.slice(literal.end);
    return proves(parseJson(prefix + SENTINEL_LITERAL + suffix), SENTINEL) ? new StringSlot(prefix, suffix) : undefined;
  }

  /** The string in the slot when `data` is this prefix, one JSON string literal and this suffix; else undefined. */
  match(data: string): string | undefined {
    const start = this.prefix.length;
    const end = data.length - this.suffix.length;
    // The middle must be at least `""`.
    if (end - start < 2 || data.charCodeAt(start) !== QUOTE || data.charCodeAt(end - 1) !== QUOTE) return undefined;
    // Compared as slices: `String.prototype.startsWith` is several times slower on these strings in V8.
    if (data.slice(0, start) !== this.prefix || data.slice(end) !== this.suffix) return undefined;
    return stringLiteral(data, start, end);
  }
}

/**
 * Where the string value of the first `"key":` in `data` is (from its opening quote to after its
 * closing one), when that value is a string literal.
 */
function findValueLiteral(data: string, key: string): { start: number; end: number } | undefined {
  const quoted = `"${key}"`;
  const at = data.indexOf(quoted);
  if (at === -1) return undefined;
  let position = skipSpace(data, at + quoted.length);
  if (data.charCodeAt(position) !== COLON) return undefined;
  position = skipSpace(data, position + 1);
  if (data.charCodeAt(position) !== QUOTE) return undefined;
  for (let index = position + 1; index < data.length; index++) {
    const code = data.charCodeAt(index);
    if (code === BACKSLASH) index++;
    else if (code === QUOTE) return { start: position, end: index + 1 };
  }
  return undefined;
}

function skipSpace(data: string, from: number): number {
  let position = from;
  for (let code = data.charCodeAt(position); code === 32 || code === 9 || code === 10 || code === 13; code = data.charCodeAt(position))
    position++;
  return position;
}

/**
 * The value of the JSON string literal `data[start, end)` (quotes included), or undefined when that
 * range is not exactly one string literal. Text without escapes is sliced; the rest is left to JSON.parse.
 */
function stringLiteral(data: string, start: number, end: number): string | undefined {
  for (let index = start + 1; index < end - 1; index++) {
    const code = data.charCodeAt(index);
    if (code === QUOTE || code === BACKSLASH || code < 32) {
      const value = parseJson(data.slice(start, end));
      return typeof value === 'string' ? value : undefined;
    }
  }
  return data.slice(start + 1, end - 1);
}
