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
import { countTextTokens } from './count-tokens.ts';
import { fittingPrefix, OutputTally, utf8Length, type BlockKind, type TokenCounter } from './output-tally.ts';
import type { StreamPart } from './stream-parts.ts';
import { answeredUsage, type Usage } from './usage.ts';

export type { TokenCounter };

export interface CapOutputTokensOptions {
  /** Prompt tokens to report when the cap cuts the stream (the upstream's own usage never arrives then). */
  inputTokens?: number;
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
        case 'tool-input-start':
          cut = this.toolStart(part, cap);
          break;
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-input-delta':
          cut = this.delta(part, cap);
          break;
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
      this.ended = true;
      this.cutAt(out, cut, cap);
      return out;
    }
    return out;
  }

  /** A tool call starts: its name is output the model produced, as the usage estimate counts it. Returns the cut when it does not fit. */
  private toolStart(part: Extract<StreamPart, { type: 'tool-input-start' }>, cap: number): StreamPart[] | undefined {
    const tally = this.tally;
    const nameTokens = part.toolName.length === 0 ? 0 : tally.countTokens(part.toolName);
    if (tally.total + nameTokens > cap && !tally.exact) this.reasoningTokens += tally.recount();
    if (tally.total + nameTokens > cap) return [];
    tally.addSettled(nameTokens);
    tally.open(part.id, 'tool');
    return undefined;
  }

  /** A text, reasoning or tool-input delta: counted (lazily) into the tally; returns the part that fits when the cap is reached. */
  private delta(
    part: Extract<StreamPart, { type: 'text-delta' | 'reasoning-delta' | 'tool-input-delta' }>,
    cap: number,
  ): StreamPart[] | undefined {
    const tally = this.tally;
    const kind = deltaKind(part)!;
    // Far from the cap: the delta's byte length bounds its tokens, nothing is counted. When the
    // bound says no, an exact recount may still leave room: then the bound keeps holding.
    const bytes = utf8Length(part.delta);
    if (tally.total + bytes > cap && !tally.exact) this.reasoningTokens += tally.recount();
    if (tally.total + bytes <= cap) {
      tally.appendUncounted(part.id, part.delta, bytes, kind);
      if (kind === 'reasoning') this.reasoningTokens += bytes;
      return undefined;
    }
    const blockTokensBefore = tally.tailTokens(part.id);
    const blockTokens = tally.countWith(part.id, part.delta);
    if (tally.total - blockTokensBefore + blockTokens <= cap) {
      if (kind === 'reasoning') this.reasoningTokens += blockTokens - blockTokensBefore;
      tally.append(part.id, part.delta, blockTokens, kind);
      return undefined;
    }
    const fitting = fittingPrefix(tally, part.id, part.delta, cap);
    if (fitting.text.length === 0) return [];
    const fittingTokens = tally.countWith(part.id, fitting.text);
    if (kind === 'reasoning') this.reasoningTokens += fittingTokens - blockTokensBefore;
    tally.append(part.id, fitting.text, fittingTokens, kind);
    return [{ ...part, delta: fitting.text }];
  }

  /**
   * The cap is reached: what fits, the open blocks ended, and `finish` with `length`. The runner
   * closes the upstream before this batch goes on (nobody may wait on it).
   */
  private cutAt(out: StreamPart[], cut: readonly StreamPart[], cap: number): void {
    const tally = this.tally;
    for (const kept of cut) out.push(kept);
    for (const block of tally.openBlocks()) out.push(endPart(block));
    const outputTokens = Math.min(tally.total, cap);
    out.push({
      type: 'finish',
      finishReason: 'length',
      stopSequence: null,
      // The upstream was called (and cut): one request.
      usage: {
        ...answeredUsage(),
        inputTokens: this.options.inputTokens ?? 0,
        outputTokens,
        reasoningTokens: Math.min(this.reasoningTokens, outputTokens),
        // Counted here: the upstream's own figures never arrived.
        estimated: true,
      },
    });
  }
}

const EMPTY: readonly StreamPart[] = Object.freeze([]);

function endsStream(part: StreamPart): boolean {
  return part.type === 'finish' || part.type === 'error';
}
