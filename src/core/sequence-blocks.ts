/**
 * Enforces the stream contract's block rule once, for every backend: blocks never overlap. A block
 * (text, reasoning, tool call) ends before the next one starts, so every client format can encode the
 * parts as a plain mapping, with no buffering of its own.
 *
 * Backends may interleave blocks (an OpenAI-compatible upstream streams parallel tool calls by index and
 * may end them all only at the finish). The sequencer lets the block that started first own the output
 * until it ends; parts of blocks that start meanwhile are held and replayed (start, held deltas, end)
 * as soon as every earlier block has ended. Closing the open block early instead would lose its later
 * deltas (a tool call cannot be reopened), so it is not done. Output order is start order, so a
 * streamed block's index equals its position in the assembled (non-streaming) content.
 *
 * Also enforced here: blocks still open at
 * `finish` are ended, in start order, before it; deltas of unknown or ended blocks are dropped (but a
 * signature after its reasoning block's end passes, for encoders that still hold that item); a second
 * start of an open block is ignored.
 */
import type { StreamPart } from './stream-parts.ts';

type BlockKind = 'text' | 'reasoning' | 'tool';

interface Block {
  kind: BlockKind;
  id: string;
  /** Parts held while an earlier block owns the output (empty for the owner). */
  held: StreamPart[];
  ended: boolean;
}

const END_TYPE = { text: 'text-end', reasoning: 'reasoning-end', tool: 'tool-input-end' } as const;

function endOf(block: Block): StreamPart {
  return { type: END_TYPE[block.kind], id: block.id };
}

/**
 * The sequencer as a step function, for loops that already iterate parts (no extra async layer on the
 * hot path). `pushInto` appends the parts to emit now to the caller's array (the service's loop: no
 * array of its own per part); `push` returns them in a new array.
 */
export class BlockSequencer {
  /** Blocks started and not yet ended on the output, in start order; the first one owns the output. */
  private readonly queue: Block[] = [];
  private readonly open = new Map<string, Block>();
  /** Reasoning blocks that ended: a signature may still follow its block's end (passed through). */
  private endedReasoning: Set<string> | undefined;
  /** Where the part being pushed sends its output (the caller's array). */
  private out: StreamPart[] = [];

  push(part: StreamPart): readonly StreamPart[] {
    const out: StreamPart[] = [];
    this.pushInto(part, out);
    return out;
  }

  pushInto(part: StreamPart, out: StreamPart[]): void {
    this.out = out;
    switch (part.type) {
      case 'text-start':
        this.start('text', part.id, part);
        break;
      case 'reasoning-start':
        this.start('reasoning', part.id, part);
        break;
      case 'tool-input-start':
        this.start('tool', part.id, part);
        break;
      case 'text-delta':
        this.delta('text', part.id, part);
        break;
      case 'reasoning-delta':
      case 'reasoning-signature':
        this.delta('reasoning', part.id, part);
        break;
      case 'tool-input-delta':
        this.delta('tool', part.id, part);
        break;
      case 'text-end':
        this.end(`text:${part.id}`);
        break;
      case 'reasoning-end':
        this.end(`reasoning:${part.id}`);
        break;
      case 'tool-input-end':
        this.end(`tool:${part.id}`);
        break;
      case 'reasoning-redacted':
        // A complete block by itself: out now if nothing is open, else after the blocks before it.
        if (this.queue.length === 0) out.push(part);
        else this.queue.push({ kind: 'reasoning', id: part.id, held: [part], ended: true });
        break;
      case 'finish':
        for (const block of this.queue) {
          if (!block.ended) block.held.push(endOf(block));
          block.ended = true;
        }
        this.open.clear();
        this.drain();
        out.push(part);
        break;
      case 'response-metadata':
      case 'error':
        out.push(part);
        break;
    }
  }

  private start(kind: BlockKind, id: string, part: StreamPart): void {
    const key = `${kind}:${id}`;
    if (this.open.has(key)) return;
    const block: Block = { kind, id, held: [], ended: false };
    this.open.set(key, block);
    this.queue.push(block);
    if (this.queue.length === 1) this.out.push(part);
    else block.held.push(part);
  }

  private delta(kind: BlockKind, id: string, part: StreamPart): void {
    const owner = this.queue[0];
    // Nearly every delta belongs to the block that owns the output: out at once, without building its key.
    if (owner !== undefined && owner.id === id && owner.kind === kind && !owner.ended) {
      this.out.push(part);
      return;
    }
    const key = `${kind}:${id}`;
    const block = this.open.get(key);
    if (block === undefined) {
      if (part.type === 'reasoning-signature' && this.endedReasoning?.has(key) === true) this.out.push(part);
      return;
    }
    if (block === this.queue[0]) this.out.push(part);
    else block.held.push(part);
  }

  private end(key: string): void {
    const block = this.open.get(key);
    if (block === undefined) return;
    this.open.delete(key);
    block.ended = true;
    if (block.kind === 'reasoning') (this.endedReasoning ??= new Set()).add(key);
    if (block === this.queue[0]) {
      this.out.push(endOf(block));
      this.queue.shift();
      this.drain();
    } else {
      block.held.push(endOf(block));
    }
  }

  /** Replays waiting blocks in start order until one is still open (it then owns the output). */
  private drain(): void {
    for (let head = this.queue[0]; head !== undefined; head = this.queue[0]) {
      for (const held of head.held) this.out.push(held);
      head.held = [];
      if (!head.ended) return;
      this.queue.shift();
    }
  }
}

/** The sequencer over a whole stream (tests, and consumers that hold a stream rather than a loop). */
export async function* sequenceBlocks(parts: AsyncIterable<StreamPart>): AsyncGenerator<StreamPart, void, undefined> {
  const sequencer = new BlockSequencer();
  for await (const part of parts) {
    for (const out of sequencer.push(part)) yield out;
  }
}
