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
  /** UTF-8 of the current pre-token. */
  private scratch = new Uint8Array(1024);
  /** Merge state: where each part starts, and the rank of the pair starting at each part. */
  private partStarts = new Int32Array(1025);
  private pairRanks = new Int32Array(1025);

  /** `pattern` is the encoding's pre-token pattern (it is copied, so its `lastIndex` is never shared). */
  constructor(table: RankTable, pattern: RegExp) {
    this.table = table;
    this.pattern = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
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

  private run(text: string, tokens: number[] | undefined): number {
    if (text.length === 0) return 0;
    const pattern = this.pattern;
    pattern.lastIndex = 0;
    let count = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      count += this.encodePiece(match[0], tokens);
    }
    return count;
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
