/**
 * Streaming upstreams send most events as the same JSON text with one string changed: an OpenAI chunk's
 * `delta.content`, an Anthropic `content_block_delta`'s `delta.text`. Parsing each of them builds the
 * same object graph only to read that string. A StringSlot is such a text with the string cut out,
 * learnt from one event that was parsed in full: an event whose text is the same pieces around one JSON
 * string literal *is* the learnt event with another string in that place, so its reading is the learnt
 * reading with the new string. `match` tells whether a text is one of those, and gives its string,
 * by comparing slices, without a parse.
 *
 * Some servers also change a string the reader ignores in every event (OpenAI's `obfuscation` padding,
 * random characters of random length). Those are free slots: any string literal may stand there.
 *
 * A slot is only made when a probe proves it: the text with one sentinel string in the slot (and
 * another in each free slot) must read, through the provider's own reader, as the first sentinel in
 * the field the provider will fill, and nothing else changed. So a key written twice, or with escapes,
 * or in another object can never put the wrong string in a reading. What counts as an event worth
 * learning from, and how a matched string becomes a reading, is the provider's
 * (openai-compatible/chunk-template.ts, anthropic/delta-template.ts).
 */
import { parseJson } from './lenient-json.ts';

/** The sentinel of the value slot and of the free slots, and their literals in the probe's JSON text. */
const SENTINEL = '\u0001';
const SENTINEL_LITERAL = '"\\u0001"';
const FREE_SENTINEL_LITERAL = '"\\u0002"';
const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;

interface Literal {
  start: number;
  end: number;
  free: boolean;
}

export class StringSlot {
  /**
   * `pieces` are the constant texts around the slots (one more than the slots); `valueSlot` is the
   * position of the value among the slots, the others are free.
   */
  private constructor(
    private readonly pieces: readonly string[],
    private readonly valueSlot: number,
  ) {}

  /**
   * The slot of the first `"key":` whose value is a string literal in `data`, with a free slot for
   * the first string value of each of `freeKeys` that `data` has, when `proves` accepts the probe: the
   * JSON value of the text with sentinels in the slots, and the value slot's sentinel.
   */
  static find(
    data: string,
    key: string,
    proves: (probe: unknown, sentinel: string) => boolean,
    freeKeys: readonly string[] = [],
  ): StringSlot | undefined {
    const value = findValueLiteral(data, key);
    if (value === undefined) return undefined;
    const literals: Literal[] = [{ start: value.start, end: value.end, free: false }];
    for (const freeKey of freeKeys) {
      const free = findValueLiteral(data, freeKey);
      if (free !== undefined) literals.push({ start: free.start, end: free.end, free: true });
    }
    if (literals.length > 1) literals.sort((left, right) => left.start - right.start);
    const pieces: string[] = [];
    let probe = '';
    let from = 0;
    let valueSlot = 0;
    for (let index = 0; index < literals.length; index++) {
      const literal = literals[index]!;
      if (literal.start < from) return undefined; // two slots overlap
      const piece = data.slice(from, literal.start);
      pieces.push(piece);
      probe += piece + (literal.free ? FREE_SENTINEL_LITERAL : SENTINEL_LITERAL);
      if (!literal.free) valueSlot = index;
      from = literal.end;
    }
    const last = data.slice(from);
    pieces.push(last);
    probe += last;
    return proves(parseJson(probe), SENTINEL) ? new StringSlot(pieces, valueSlot) : undefined;
  }

  /**
   * The value slot's string when `data` is these pieces around one JSON string literal per slot;
   * else undefined. Every literal must be valid JSON, free ones too: a text a full parse would refuse
   * never matches.
   */
  match(data: string): string | undefined {
    const pieces = this.pieces;
    const first = pieces[0]!;
    if (data.slice(0, first.length) !== first) return undefined;
    let position = first.length;
    let value: string | undefined;
    for (let slot = 0; slot < pieces.length - 1; slot++) {
      const scanned = scanLiteral(data, position);
      if (scanned === 0) return undefined;
      const end = scanned > 0 ? scanned : -scanned;
      if (slot === this.valueSlot) {
        value = scanned > 0 ? data.slice(position + 1, end - 1) : escapedString(data.slice(position, end));
        if (value === undefined) return undefined;
      } else if (scanned < 0 && escapedString(data.slice(position, end)) === undefined) {
        return undefined;
      }
      const piece = pieces[slot + 1]!;
      position = end + piece.length;
      // Compared as slices: `String.prototype.startsWith` is several times slower on these strings in V8.
      if (data.slice(end, position) !== piece) return undefined;
    }
    return position === data.length ? value : undefined;
  }
}

/**
 * Scans the JSON string literal that starts at `start`. Returns where it ends (after the closing quote)
 * when it has no escapes, minus that when it has some (JSON.parse must decode and check them), and 0
 * when there is no literal there (no quote, a raw control character, no closing quote). A number, not
 * an object: this runs for every slot of every streamed event.
 */
function scanLiteral(data: string, start: number): number {
  if (data.charCodeAt(start) !== QUOTE) return 0;
  let plain = true;
  for (let index = start + 1; index < data.length; index++) {
    const code = data.charCodeAt(index);
    if (code === QUOTE) return plain ? index + 1 : -(index + 1);
    if (code === BACKSLASH) {
      plain = false;
      index++;
    } else if (code < 32) {
      return 0; // a raw control character: not JSON
    }
  }
  return 0;
}

/** The value of a literal with escapes, or undefined when they are not valid JSON. */
function escapedString(literal: string): string | undefined {
  const value = parseJson(literal);
  return typeof value === 'string' ? value : undefined;
}

/**
 * Where the string value of the first `"key":` in `data` is (from its opening quote to after its
 * closing one), when that value is a string literal. The probe in `find` checks it is the one meant.
 */
function findValueLiteral(data: string, key: string): { start: number; end: number } | undefined {
  const quoted = `"${key}"`;
  const at = data.indexOf(quoted);
  if (at === -1) return undefined;
  let position = skipSpace(data, at + quoted.length);
  if (data.charCodeAt(position) !== COLON) return undefined;
  position = skipSpace(data, position + 1);
  const scanned = scanLiteral(data, position);
  if (scanned === 0) return undefined;
  const end = scanned > 0 ? scanned : -scanned;
  // A literal whose escapes are not JSON is no value (a full parse of this text failed anyway).
  return scanned < 0 && escapedString(data.slice(position, end)) === undefined ? undefined : { start: position, end };
}

function skipSpace(data: string, from: number): number {
  let position = from;
  for (let code = data.charCodeAt(position); code === 32 || code === 9 || code === 10 || code === 13; code = data.charCodeAt(position))
    position++;
  return position;
}
