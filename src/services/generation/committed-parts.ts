/**
 * The step every committed batch of an attempt goes through (generation-attempt.ts), streamed or whole:
 * parts sequenced so that blocks never overlap (core/sequence-blocks.ts), up to the backend's `finish`
 * (its usage normalised, the lease told the tokens, the trace the result) or `error` part; the text
 * produced is kept to count tokens when the backend reports no usage.
 */
import { countRequestTokens, countTextTokens } from '../../core/count-tokens.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import { BlockSequencer } from '../../core/sequence-blocks.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { totalTokens, type Usage } from '../../core/usage.ts';
import type { AttemptTrace } from '../../telemetry/trace-types.ts';
import type { Lease } from './routing/router.ts';

export class CommittedParts {
  private readonly output = new OutputText();
  private readonly sequencer = new BlockSequencer();
  /** The backend ended (its `finish` or `error` part came): nothing to abandon. */
  backendDone = false;

  constructor(
    private readonly lease: Lease,
    private readonly request: GenerationRequest,
    private readonly promptTokens: number | undefined,
    private readonly trace: AttemptTrace | undefined,
  ) {}

  /** Appends `batch`, sequenced, to `out`, up to its `finish` or `error` part; true when one came (the answer ended). */
  take(batch: readonly StreamPart[], out: StreamPart[]): boolean {
    for (const part of batch) {
      if (part.type === 'finish') {
        this.backendDone = true;
        const usage = normaliseUsage(part.usage, this.request, this.output, this.promptTokens);
        this.trace?.finished(usage, part.finishReason);
        this.lease.end(totalTokens(usage));
        this.sequencer.pushInto(usage === part.usage ? part : { ...part, usage }, out);
        return true;
      }
      if (part.type === 'error') {
        this.backendDone = true;
        this.trace?.fail(part.error);
        out.push(part);
        return true;
      }
      this.output.observe(part);
      this.sequencer.pushInto(part, out);
    }
    return false;
  }
}

/** True when `batch` holds the backend's last part (`finish` or `error`): a whole answer in one batch. */
export function endsAnswer(batch: readonly StreamPart[]): boolean {
  for (let index = batch.length - 1; index >= 0; index--) {
    const type = batch[index]!.type;
    if (type === 'finish' || type === 'error') return true;
  }
  return false;
}

/** The generated text seen so far, kept only to count tokens when the backend reports no usage. */
class OutputText {
  private readonly pieces: string[] = [];

  observe(part: StreamPart): void {
    switch (part.type) {
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-input-delta':
        this.pieces.push(part.delta);
        break;
      case 'tool-input-start':
        this.pieces.push(part.toolName);
        break;
      default:
        break;
    }
  }

  countTokens(): number {
    return countTextTokens(this.pieces.join(''));
  }
}

/**
 * Usage as the service reports it. A backend that reported none marks its figures `estimated`; the
 * missing ones are then counted here (core/count-tokens.ts), the prompt only when
 * the caller did not count it already.
 */
function normaliseUsage(usage: Usage, request: GenerationRequest, output: OutputText, promptTokens: number | undefined): Usage {
  if (!usage.estimated) return usage;
  return {
    ...usage,
    // Counted once by the caller when it could (`GenerationStreamOptions.promptTokens`).
    inputTokens: usage.inputTokens > 0 ? usage.inputTokens : (promptTokens ?? countRequestTokens(request)),
    outputTokens: usage.outputTokens > 0 ? usage.outputTokens : output.countTokens(),
    estimated: true,
  };
}
