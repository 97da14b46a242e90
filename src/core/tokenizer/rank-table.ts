/**
 * The byte-pair ranks of a tiktoken encoding in three typed arrays instead of 200,000 strings in a Map:
 * every token's bytes back to back (ordered by rank), where each token starts, and an open-addressing
 * hash table from a byte sequence to its rank. For o200k_base that is about 4 MB, where the JavaScript
 * module of ranks that gpt-tokenizer ships costs about 60 MB of resident memory once parsed.
 *
 * Built from the `.tiktoken` text format (one `base64-of-token-bytes rank` pair per line), which is
 * the format OpenAI publishes and gpt-tokenizer ships under `data/`.
 */

const NEWLINE = 10;
const SPACE = 32;
const PADDING = 61; // '='

/** Base64 digit values by character code; -1 for anything else. */
const BASE64_VALUES = new Int8Array(256).fill(-1);
for (const [index, character] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) {
  BASE64_VALUES[character.charCodeAt(0)] = index;
}

function malformed(data: Uint8Array, start: number, end: number): Error {
  return new Error(`malformed rank line: ${Buffer.from(data.subarray(start, Math.min(end, start + 80))).toString('latin1')}`);
}

/** Bytes encoded by the base64 text `data[start, start + length)`. */
function decodedLength(data: Uint8Array, start: number, length: number): number {
  let padding = 0;
  while (padding < length && data[start + length - 1 - padding] === PADDING) padding++;
  return Math.floor(((length - padding) * 3) / 4);
}

/** Decodes base64 `data[start, end)` into `target` from `offset`; false on a character outside the alphabet. */
function decodeBase64(data: Uint8Array, start: number, end: number, target: Uint8Array, offset: number): boolean {
  while (end > start && data[end - 1] === PADDING) end--;
  let bits = 0;
  let bitCount = 0;
  for (let index = start; index < end; index++) {
    const value = BASE64_VALUES[data[index]!]!;
    if (value === -1) return false;
    bits = ((bits << 6) | value) & 0xffffff;
    bitCount += 6;
    if (bitCount >= 8) {
      bitCount -= 8;
      target[offset++] = (bits >> bitCount) & 0xff;
    }
  }
  return true;
}

/** FNV-1a over `bytes[start, end)`. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index++) hash = Math.imul(hash ^ bytes[index]!, 0x01000193);
  return hash >>> 0;
}

export class RankTable {
  /** One more than the highest rank. */
  readonly size: number;
  /** Token bytes, concatenated in rank order. */
  private readonly bytes: Uint8Array;
  /** Token `rank` is `bytes[starts[rank], starts[rank + 1])`; an unused rank has no bytes. */
  private readonly starts: Uint32Array;
  /** rank + 1 at a slot, 0 for an empty slot; linear probing. */
  private readonly slots: Int32Array;
  private readonly mask: number;

  private constructor(bytes: Uint8Array, starts: Uint32Array) {
    this.bytes = bytes;
    this.starts = starts;
    this.size = starts.length - 1;
    let capacity = 1;
    while (capacity < this.size * 2) capacity *= 2;
    this.mask = capacity - 1;
    this.slots = new Int32Array(capacity);
    for (let rank = 0; rank < this.size; rank++) {
      const start = starts[rank]!;
      const end = starts[rank + 1]!;
      if (end === start) continue;
      let slot = hashBytes(bytes, start, end) & this.mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = rank + 1;
    }
  }

  /**
   * Parses the `.tiktoken` format from its bytes, without making a string per line: the ranks load
   * in a few typed arrays, so loading leaves no garbage behind. Throws on a malformed line or a rank
   * listed twice.
   */
  static fromTiktoken(data: Uint8Array): RankTable {
    let lineCount = 0;
    for (let index = 0; index < data.length; index++) if (data[index] === NEWLINE) lineCount++;
    if (data.length > 0 && data[data.length - 1] !== NEWLINE) lineCount++;
    const lineStarts = new Uint32Array(lineCount);
    const base64Lengths = new Uint32Array(lineCount);
    const lineRanks = new Int32Array(lineCount);
    let lines = 0;
    let highestRank = -1;
    for (let lineStart = 0; lineStart < data.length;) {
      let lineEnd = data.indexOf(NEWLINE, lineStart);
      if (lineEnd === -1) lineEnd = data.length;
      if (lineEnd > lineStart) {
        const space = data.indexOf(SPACE, lineStart);
        if (space <= lineStart || space >= lineEnd - 1) throw malformed(data, lineStart, lineEnd);
        let rank = 0;
        for (let index = space + 1; index < lineEnd; index++) {
          const digit = data[index]! - 48;
          if (digit < 0 || digit > 9 || rank > 0x0fffffff) throw malformed(data, lineStart, lineEnd);
          rank = rank * 10 + digit;
        }
        lineStarts[lines] = lineStart;
        base64Lengths[lines] = space - lineStart;
        lineRanks[lines] = rank;
        lines++;
        if (rank > highestRank) highestRank = rank;
      }
      lineStart = lineEnd + 1;
    }
    const starts = new Uint32Array(highestRank + 2);
    for (let line = 0; line < lines; line++) {
      const rank = lineRanks[line]!;
      if (starts[rank + 1] !== 0) throw new Error(`rank ${rank} is listed twice`);
      starts[rank + 1] = decodedLength(data, lineStarts[line]!, base64Lengths[line]!);
    }
    for (let rank = 0; rank <= highestRank; rank++) starts[rank + 1] = starts[rank + 1]! + starts[rank]!;
    const bytes = new Uint8Array(starts[highestRank + 1]!);
    for (let line = 0; line < lines; line++) {
      const start = lineStarts[line]!;
      if (!decodeBase64(data, start, start + base64Lengths[line]!, bytes, starts[lineRanks[line]!]!)) {
        throw malformed(data, start, start + base64Lengths[line]!);
      }
    }
    return new RankTable(bytes, starts);
  }

  /** The rank of `source[start, end)`, or -1 when that byte sequence is not a token. */
  rankOf(source: Uint8Array, start: number, end: number): number {
    const length = end - start;
    let slot = hashBytes(source, start, end) & this.mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) return -1;
      const tokenStart = this.starts[entry - 1]!;
      if (this.starts[entry]! - tokenStart === length) {
        let index = 0;
        while (index < length && this.bytes[tokenStart + index] === source[start + index]) index++;
        if (index === length) return entry - 1;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** The bytes of token `rank` (a view, not a copy); empty for an unused or unknown rank. */
  bytesOf(rank: number): Uint8Array {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.size) return this.bytes.subarray(0, 0);
    return this.bytes.subarray(this.starts[rank]!, this.starts[rank + 1]!);
  }
}
