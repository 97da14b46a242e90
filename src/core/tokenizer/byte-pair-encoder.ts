/**
 * Byte-pair encoding over a `RankTable`, as tiktoken does it: the text is split into pre-tokens by the
 * encoding's pattern; a pre-token that is itself a token costs one lookup; any other is merged pair by
 * pair, always the adjacent pair of lowest rank first (leftmost on a tie), until no pair is a token.
 *
 * Ordinary text only: `<|endoftext|>` and the other special-token strings are counted as the text they
 * are, as tiktoken's `encode_ordinary` does (a prompt that quotes them is still a prompt, never an
 * error). No cache of merged pre-tokens: the merge is cheap for the short pieces the pattern makes,
 * and a cache keyed by caller text would grow with every distinct prompt.
 */
import type { RankTable } from './rank-table.ts';

const NO_RANK = 0x7fffffff;
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

export class BytePairEncoder {
  private readonly table: RankTable;
  private readonly pattern: RegExp;
  /**
   * The same pattern, sticky: `test()` at a position matches only there and moves `lastIndex` to the
   * match's end without building a match array or a substring (the global pattern's `exec` allocated
   * ~100 bytes per pre-token: ~1.7 KB of every chat request's prompt count, docs/performance.md).
   */
  private readonly sticky: RegExp;
  /** UTF-8 of the current pre-token. */
  private scratch = new Uint8Array(1024);
  /** Merge state: where each part starts, and the rank of the pair starting at each part. */
  private partStarts = new Int32Array(1025);
  private pairRanks = new Int32Array(1025);

  /** `pattern` is the encoding's pre-token pattern (it is copied, so its `lastIndex` is never shared). */
  constructor(table: RankTable, pattern: RegExp) {
    this.table = table;
    const flags = pattern.flags.replace(/[gy]/g, '');
    this.pattern = new RegExp(pattern.source, `${flags}g`);
    this.sticky = new RegExp(pattern.source, `${flags}y`);
  }

  /** Number of tokens of `text`. */
  count(text: string): number {
    return this.run(text, undefined);
  }

  /** Tokens of `text`. */
  encode(text: string): number[] {
    const tokens: number[] = [];
    this.run(text, tokens);
    return tokens;
  }

  /** Text of `tokens`; a character whose bytes are cut off by the end becomes U+FFFD. Unknown ranks decode to nothing. */
  decode(tokens: readonly number[]): string {
    let length = 0;
    for (const token of tokens) length += this.table.bytesOf(token).length;
    const bytes = new Uint8Array(length);
    let offset = 0;
    for (const token of tokens) {
      const tokenBytes = this.table.bytesOf(token);
      bytes.set(tokenBytes, offset);
      offset += tokenBytes.length;
    }
    return utf8Decoder.decode(bytes);
  }

  /**
   * Pre-tokens are the global pattern's successive matches. A match that starts where the previous one
   * ended (every match, with this encoding's pattern, which matches any character) is found with the
   * sticky pattern's `test()`, which matches at that position exactly where `exec` would (the leftmost
   * match); otherwise `exec` finds the next one, skipping what matched nothing.
   */
  private run(text: string, tokens: number[] | undefined): number {
    if (text.length === 0) return 0;
    const sticky = this.sticky;
    let count = 0;
    let at = 0;
    while (at < text.length) {
      sticky.lastIndex = at;
      if (sticky.test(text)) {
        const end = sticky.lastIndex;
        // An empty match: `exec` would move on by one, as here.
        if (end === at) {
          at++;
          continue;
        }
        count += this.encodeRange(text, at, end, tokens);
        at = end;
        continue;
      }
      const pattern = this.pattern;
      pattern.lastIndex = at;
      const match = pattern.exec(text);
      if (match === null) break;
      count += this.encodePiece(match[0], tokens);
      at = pattern.lastIndex === match.index ? pattern.lastIndex + 1 : pattern.lastIndex;
    }
    return count;
  }

  /** `text[start, end)` encoded as one pre-token, its UTF-8 written straight into the scratch (no substring). */
  private encodeRange(text: string, start: number, end: number, tokens: number[] | undefined): number {
    const length = this.utf8Into(text, start, end);
    const whole = this.table.rankOf(this.scratch, 0, length);
    if (whole !== -1) {
      tokens?.push(whole);
      return 1;
    }
    return this.merge(length, tokens);
  }

  /** UTF-8 of `text[start, end)` into the scratch, as TextEncoder writes it (a lone surrogate is U+FFFD); its length. */
  private utf8Into(text: string, start: number, end: number): number {
    // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
    if (this.scratch.length < (end - start) * 3) this.scratch = new Uint8Array((end - start) * 3);
    const bytes = this.scratch;
    let length = 0;
    for (let index = start; index < end; index++) {
      let code = text.charCodeAt(index);
      if (code < 0x80) {
        bytes[length++] = code;
        continue;
      }
      if (code < 0x800) {
        bytes[length++] = 0xc0 | (code >> 6);
        bytes[length++] = 0x80 | (code & 0x3f);
        continue;
      }
      if (code >= 0xd800 && code <= 0xdfff) {
        const next = index + 1 < end ? text.charCodeAt(index + 1) : 0;
        if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          const point = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
          bytes[length++] = 0xf0 | (point >> 18);
          bytes[length++] = 0x80 | ((point >> 12) & 0x3f);
          bytes[length++] = 0x80 | ((point >> 6) & 0x3f);
          bytes[length++] = 0x80 | (point & 0x3f);
          index++;
          continue;
        }
        code = 0xfffd;
      }
      bytes[length++] = 0xe0 | (code >> 12);
      bytes[length++] = 0x80 | ((code >> 6) & 0x3f);
      bytes[length++] = 0x80 | (code & 0x3f);
    }
    return length;
  }

  private encodePiece(piece: string, tokens: number[] | undefined): number {
    // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
    if (this.scratch.length < piece.length * 3) this.scratch = new Uint8Array(piece.length * 3);
    const length = utf8.encodeInto(piece, this.scratch).written;
    const whole = this.table.rankOf(this.scratch, 0, length);
    if (whole !== -1) {
      tokens?.push(whole);
      return 1;
    }
    return this.merge(length, tokens);
  }

  /** tiktoken's byte-pair merge of `scratch[0, length)`, quadratic in the (short) pre-token's length. */
  private merge(length: number, tokens: number[] | undefined): number {
    const bytes = this.scratch;
    const table = this.table;
    if (this.partStarts.length < length + 1) {
      this.partStarts = new Int32Array(length + 1);
      this.pairRanks = new Int32Array(length + 1);
    }
    const starts = this.partStarts;
    const ranks = this.pairRanks;
    // Parts 0..parts-1 start at starts[i]; starts[parts - 1] === length closes the last one.
    let parts = length + 1;
    for (let index = 0; index <= length; index++) {
      starts[index] = index;
      ranks[index] = index + 2 <= length ? rankOrNone(table.rankOf(bytes, index, index + 2)) : NO_RANK;
    }
    for (;;) {
      let lowest = NO_RANK;
      let at = -1;
      for (let index = 0; index < parts - 2; index++) {
        if (ranks[index]! < lowest) {
          lowest = ranks[index]!;
          at = index;
        }
      }
      if (at === -1) break;
      // Parts `at` and `at + 1` become one: the pairs that start at `at - 1` and at `at` change.
      if (at > 0) ranks[at - 1] = rankOrNone(table.rankOf(bytes, starts[at - 1]!, starts[at + 2]!));
      ranks[at] = at + 3 < parts ? rankOrNone(table.rankOf(bytes, starts[at]!, starts[at + 3]!)) : NO_RANK;
      starts.copyWithin(at + 1, at + 2, parts);
      ranks.copyWithin(at + 1, at + 2, parts);
      parts--;
    }
    if (tokens !== undefined) {
      for (let index = 0; index < parts - 1; index++) tokens.push(table.rankOf(bytes, starts[index]!, starts[index + 1]!));
    }
    return parts - 1;
  }
}

function rankOrNone(rank: number): number {
  return rank === -1 ? NO_RANK : rank;
}
