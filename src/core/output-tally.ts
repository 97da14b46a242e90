/**
 * The running count of a stream's output for the output cap (cap-output-tokens.ts): each open block's
 * unsettled tail, the settled total, and the text added at its UTF-8 length until it must be counted.
 * See the cap's file header for why counting is lazy and where a tail is settled.
 */
import { isWhitespace, MAX_RUN_LENGTH } from './count-tokens.ts';

export type TokenCounter = (text: string) => number;

/** An unsettled tail longer than this is settled at its last whitespace (or whole, inside a long word). */
const SETTLE_THRESHOLD = 64;

/** How far past the binary search's answer a longer fitting prefix is looked for, characters. */
const LOOKAHEAD_CHARACTERS = 32;

export type BlockKind = 'text' | 'reasoning' | 'tool';

interface OpenBlock {
  kind: BlockKind;
  /** Output of this block not yet added to the settled total (its count may still change as text arrives). */
  tail: string;
  /** Tokens of `tail` when `exact`; otherwise an upper bound (text added since the last count at its UTF-8 length). */
  tailTokens: number;
  exact: boolean;
}

/** Text of a block that ended before it was ever counted, with the upper bound it adds to the total. */
interface UncountedText {
  kind: BlockKind;
  text: string;
  bound: number;
}

/** UTF-8 length of a string: an upper bound of its tokens (every token is at least one byte). */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Running token count of the output (exact, or an upper bound until `recount`), per open block plus a settled total. */
export class OutputTally {
  private settled = 0;
  /** Upper bound of the tokens in `closedUncounted`. */
  private closedBound = 0;
  private closedUncounted: UncountedText[] = [];
  private readonly blocks = new Map<string, OpenBlock>();

  constructor(readonly countTokens: TokenCounter) {}

  get total(): number {
    let total = this.settled + this.closedBound;
    for (const block of this.blocks.values()) total += block.tailTokens;
    return total;
  }

  /** Whether `total` is an exact count rather than an upper bound. */
  get exact(): boolean {
    if (this.closedUncounted.length > 0) return false;
    for (const block of this.blocks.values()) if (!block.exact) return false;
    return true;
  }

  /** Output counted on its own (a tool's name): it never merges into tokens with what follows. */
  addSettled(tokens: number): void {
    this.settled += tokens;
  }

  open(id: string, kind: BlockKind): void {
    if (!this.blocks.has(id)) this.blocks.set(id, { kind, tail: '', tailTokens: 0, exact: true });
  }

  /** Settles and forgets a block (an uncounted one keeps its bound until `recount`). */
  close(id: string): void {
    const block = this.blocks.get(id);
    if (block === undefined) return;
    this.blocks.delete(id);
    if (block.exact) {
      this.settled += block.tailTokens;
      return;
    }
    this.closedUncounted.push({ kind: block.kind, text: block.tail, bound: block.tailTokens });
    this.closedBound += block.tailTokens;
  }

  /** Blocks still open, in the order they were started. */
  openBlocks(): Array<{ id: string; kind: BlockKind }> {
    return [...this.blocks.entries()].map(([id, block]) => ({ id, kind: block.kind }));
  }

  /** Tokens of the block's unsettled tail (exact after `recount`). */
  tailTokens(id: string): number {
    return this.blocks.get(id)?.tailTokens ?? 0;
  }

  /** Tokens of the block's tail after appending `text`; nothing is changed. */
  countWith(id: string, text: string): number {
    const tail = this.blocks.get(id)?.tail ?? '';
    return this.countTokens(tail + text);
  }

  /** What the total would be after appending `text` to block `id` (exact when the tally is). */
  totalWith(id: string, text: string): number {
    const block = this.blocks.get(id);
    return this.total - (block?.tailTokens ?? 0) + this.countWith(id, text);
  }

  /** Appends text without counting it: its UTF-8 length is added as an upper bound of its tokens. */
  appendUncounted(id: string, text: string, bytes: number, kind: BlockKind): void {
    this.open(id, kind);
    const block = this.blocks.get(id)!;
    block.tail += text;
    block.tailTokens += bytes;
    block.exact = false;
  }

  /**
   * Counts everything added uncounted, so that `total` is exact again. Returns how much the reasoning
   * blocks' bound fell (zero or negative), to correct a running reasoning figure kept from the bounds.
   */
  recount(): number {
    let reasoningCorrection = 0;
    for (const closed of this.closedUncounted) {
      const tokens = closed.text.length === 0 ? 0 : this.countTokens(closed.text);
      if (closed.kind === 'reasoning') reasoningCorrection += tokens - closed.bound;
      this.settled += tokens;
    }
    this.closedUncounted = [];
    this.closedBound = 0;
    for (const block of this.blocks.values()) {
      if (block.exact) continue;
      const tokens = block.tail.length === 0 ? 0 : this.countTokens(block.tail);
      if (block.kind === 'reasoning') reasoningCorrection += tokens - block.tailTokens;
      block.tailTokens = tokens;
      block.exact = true;
      this.settleTail(block);
    }
    return reasoningCorrection;
  }

  /** Appends counted text to a block (its tail must be exact), then settles what lies before its last whitespace. */
  append(id: string, text: string, tokens: number, kind: BlockKind): void {
    this.open(id, kind);
    const block = this.blocks.get(id)!;
    block.tail += text;
    block.tailTokens = tokens;
    this.settleTail(block);
  }

  private settleTail(block: OpenBlock): void {
    if (block.tail.length <= SETTLE_THRESHOLD) return;
    let cut = block.tail.length;
    while (cut > 0 && !isWhitespace(block.tail.charCodeAt(cut - 1))) cut--;
    // The word after the last whitespace (cut back to just before that whitespace, as the tokenizer
    // attaches a leading space to the next word) stays unsettled; a word longer than a tokenizer run
    // is settled whole (the counter splits such runs anyway).
    let keepFrom = cut > 0 ? cut - 1 : 0;
    if (block.tail.length - keepFrom > MAX_RUN_LENGTH) keepFrom = block.tail.length;
    if (keepFrom === 0) return;
    const kept = block.tail.slice(keepFrom);
    const keptTokens = kept.length === 0 ? 0 : this.countTokens(kept);
    this.settled += block.tailTokens - keptTokens;
    block.tail = kept;
    block.tailTokens = keptTokens;
  }
}

/**
 * Longest prefix of `delta` whose tokens fit in block `id` within `cap`: binary search over the
 * prefix length, then a short look further ahead; never splits a surrogate pair.
 */
export function fittingPrefix(tally: OutputTally, id: string, delta: string, cap: number): { text: string; total: number } {
  let low = 0;
  let lowTotal = tally.totalWith(id, '');
  // Every token covers at most a tokenizer run of characters: no need to search beyond that.
  let high = Math.min(delta.length, (cap - lowTotal + 1) * MAX_RUN_LENGTH * 2);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    const total = tally.totalWith(id, delta.slice(0, middle));
    if (total <= cap) {
      low = middle;
      lowTotal = total;
    } else {
      high = middle - 1;
    }
  }
  // Counts of growing prefixes are not strictly monotonic ("hello wor" can count fewer tokens than
  // "hello worl"): look a little further for a longer prefix that still fits, so that the cut falls on
  // a token boundary rather than inside a token.
  for (let candidate = Math.min(delta.length, low + LOOKAHEAD_CHARACTERS); candidate > low; candidate--) {
    const total = tally.totalWith(id, delta.slice(0, candidate));
    if (total <= cap) {
      low = candidate;
      lowTotal = total;
      break;
    }
  }
  let length = low;
  const last = delta.charCodeAt(length - 1);
  if (length > 0 && last >= 0xd800 && last <= 0xdbff) {
    length--;
    lowTotal = tally.totalWith(id, delta.slice(0, length));
  }
  return { text: delta.slice(0, length), total: lowTotal };
}
