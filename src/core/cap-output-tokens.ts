/**
 * `max_tokens` enforced by Switchyard: an upstream that ignores the request's cap must not
 * stream (and charge) past it. `capOutputTokens` is a pure transform of the canonical stream: it
 * counts the output (text, reasoning, tool names and tool arguments) as it streams, and once the next
 * delta would pass the cap it keeps only the part of that delta that fits (cut at a token boundary),
 * ends the blocks still open, and finishes with `finishReason: 'length'`. It then stops consuming the
 * upstream (its iterator's `return()` runs, which aborts the upstream request). Reported usage never
 * exceeds the cap.
 *
 * Counting is lazy: a token is at least one UTF-8 byte, so text is first added at its byte length, an
 * upper bound of its tokens, and counted only when that bound would pass the cap. An answer well inside
 * its cap costs no tokenizer call at all; one near its cap is counted once the bound gets there (and
 * goes back to the bound while the exact figure leaves room), then incrementally and linearly: each
 * block keeps only a short unsettled tail (the text after its last whitespace, at most about
 * MAX_RUN_LENGTH characters); text before it is counted once and added to a settled total. Splitting at
 * whitespace matches how the tokenizer pre-splits words, so the running figure stays close to counting
 * the whole output at once.
 *
 * Parts come in batches (core/batched.ts). A batch that ends with the upstream's `finish`, whose
 * reported (not estimated) output is within the cap, passes as it is: the upstream's own count of the
 * whole answer is in hand before any of that batch reached the client, so nothing needs counting (a
 * whole JSON answer, or a stream that arrived in one read).
 */
import { throughStages, type Batched, type BatchStage } from './batched.ts';
import { countTextTokens, isWhitespace, MAX_RUN_LENGTH } from './count-tokens.ts';
import type { StreamPart } from './stream-parts.ts';
import { emptyUsage, type Usage } from './usage.ts';

export type TokenCounter = (text: string) => number;

export interface CapOutputTokensOptions {
  /** Prompt tokens to report when the cap cuts the stream (the upstream's own usage never arrives then). */
  inputTokens?: number;
}

/** An unsettled tail longer than this is settled at its last whitespace (or whole, inside a long word). */
const SETTLE_THRESHOLD = 64;

/** How far past the binary search's answer a longer fitting prefix is looked for, characters. */
const LOOKAHEAD_CHARACTERS = 32;

type BlockKind = 'text' | 'reasoning' | 'tool';

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
function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Running token count of the output (exact, or an upper bound until `recount`), per open block plus a settled total. */
class OutputTally {
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
function fittingPrefix(tally: OutputTally, id: string, delta: string, cap: number): { text: string; total: number } {
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

function endPart(block: { id: string; kind: BlockKind }): StreamPart {
  switch (block.kind) {
    case 'text':
      return { type: 'text-end', id: block.id };
    case 'reasoning':
      return { type: 'reasoning-end', id: block.id };
    case 'tool':
      return { type: 'tool-input-end', id: block.id };
  }
}

function deltaKind(part: StreamPart): BlockKind | undefined {
  switch (part.type) {
    case 'text-delta':
      return 'text';
    case 'reasoning-delta':
      return 'reasoning';
    case 'tool-input-delta':
      return 'tool';
    default:
      return undefined;
  }
}

/** The upstream's final usage with output figures held to the cap. */
function clampUsage(usage: Usage, cap: number): Usage {
  if (usage.outputTokens <= cap && usage.reasoningTokens <= cap) return usage;
  const outputTokens = Math.min(usage.outputTokens, cap);
  return { ...usage, outputTokens, reasoningTokens: Math.min(usage.reasoningTokens, outputTokens) };
}

/**
 * The canonical stream with at most `maxOutputTokens` output tokens (see the file header). With no cap
 * (`undefined`) the parts pass through untouched. `countTokens` defaults to the local tokenizer. Parts
 * are read and passed on in batches (core/batched.ts); the generation service runs `OutputCap` as a
 * stage of its own loop instead.
 */
export function capOutputTokens(
  parts: AsyncIterable<StreamPart>,
  maxOutputTokens: number | undefined,
  countTokens: TokenCounter = countTextTokens,
  options: CapOutputTokensOptions = {},
): Batched<StreamPart> {
  return throughStages(parts, [new OutputCap(maxOutputTokens, countTokens, options)]);
}

/**
 * The cap as a synchronous stage (core/batched.ts `BatchStage`), one batch at a time. It ends the
 * stream after `finish` or `error`, and when it cuts: its runner then stops reading and closes the
 * upstream before the cut batch goes on.
 */
export class OutputCap implements BatchStage<StreamPart> {
  ended = false;
  private readonly cap: number | undefined;
  private readonly tally: OutputTally;
  private reasoningTokens = 0;

  constructor(
    maxOutputTokens: number | undefined,
    countTokens: TokenCounter = countTextTokens,
    private readonly options: CapOutputTokensOptions = {},
  ) {
    this.cap = maxOutputTokens === undefined ? undefined : Math.max(0, Math.floor(maxOutputTokens));
    this.tally = new OutputTally(countTokens);
  }

  push(batch: readonly StreamPart[]): readonly StreamPart[] {
    const cap = this.cap;
    if (this.ended) return EMPTY;
    if (cap === undefined) {
      if (batch.some(endsStream)) this.ended = true;
      return batch;
    }
    const last = batch[batch.length - 1];
    if (last?.type === 'finish' && !last.usage.estimated && last.usage.outputTokens <= cap) {
      // The upstream's own count of the whole answer arrived before any of this batch was passed on,
      // and it is within the cap: nothing needs counting or cutting (a whole JSON answer, or a stream
      // whose last read carried everything).
      this.ended = true;
      return batch;
    }
    const tally = this.tally;
    const countTokens = tally.countTokens;
    const out: StreamPart[] = [];
    for (const part of batch) {
      let cut: StreamPart[] | undefined;
      switch (part.type) {
        case 'text-start':
          tally.open(part.id, 'text');
          break;
        case 'reasoning-start':
          tally.open(part.id, 'reasoning');
          break;
        case 'text-end':
        case 'reasoning-end':
        case 'tool-input-end':
          tally.close(part.id);
          break;
        case 'tool-input-start': {
          // The tool's name is output the model produced, as the usage estimate counts it.
          const nameTokens = part.toolName.length === 0 ? 0 : countTokens(part.toolName);
          if (tally.total + nameTokens > cap && !tally.exact) this.reasoningTokens += tally.recount();
          if (tally.total + nameTokens > cap) {
            cut = [];
            break;
          }
          tally.addSettled(nameTokens);
          tally.open(part.id, 'tool');
          break;
        }
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-input-delta': {
          const kind = deltaKind(part)!;
          // Far from the cap: the delta's byte length bounds its tokens, nothing is counted. When the
          // bound says no, an exact recount may still leave room: then the bound keeps holding.
          const bytes = utf8Length(part.delta);
          if (tally.total + bytes > cap && !tally.exact) this.reasoningTokens += tally.recount();
          if (tally.total + bytes <= cap) {
            tally.appendUncounted(part.id, part.delta, bytes, kind);
            if (kind === 'reasoning') this.reasoningTokens += bytes;
            break;
          }
          const blockTokensBefore = tally.tailTokens(part.id);
          const blockTokens = tally.countWith(part.id, part.delta);
          if (tally.total - blockTokensBefore + blockTokens <= cap) {
            if (kind === 'reasoning') this.reasoningTokens += blockTokens - blockTokensBefore;
            tally.append(part.id, part.delta, blockTokens, kind);
            break;
          }
          const fitting = fittingPrefix(tally, part.id, part.delta, cap);
          cut = [];
          if (fitting.text.length > 0) {
            const fittingTokens = tally.countWith(part.id, fitting.text);
            if (kind === 'reasoning') this.reasoningTokens += fittingTokens - blockTokensBefore;
            tally.append(part.id, fitting.text, fittingTokens, kind);
            cut.push({ ...part, delta: fitting.text });
          }
          break;
        }
        case 'finish':
          out.push({ ...part, usage: clampUsage(part.usage, cap) });
          this.ended = true;
          return out;
        case 'error':
          out.push(part);
          this.ended = true;
          return out;
        default:
          break;
      }
      if (cut === undefined) {
        out.push(part);
        continue;
      }
      // The cap is reached: what fits, the open blocks ended, and `finish` with `length`. The runner
      // closes the upstream before this batch goes on (nobody may wait on it).
      this.ended = true;
      for (const kept of cut) out.push(kept);
      for (const block of tally.openBlocks()) out.push(endPart(block));
      const outputTokens = Math.min(tally.total, cap);
      out.push({
        type: 'finish',
        finishReason: 'length',
        stopSequence: null,
        usage: {
          ...emptyUsage(),
          inputTokens: this.options.inputTokens ?? 0,
          outputTokens,
          reasoningTokens: Math.min(this.reasoningTokens, outputTokens),
          // Counted here: the upstream's own figures never arrived.
          estimated: true,
        },
      });
      return out;
    }
    return out;
  }
}

const EMPTY: readonly StreamPart[] = Object.freeze([]);

function endsStream(part: StreamPart): boolean {
  return part.type === 'finish' || part.type === 'error';
}
