/**
 * Maps Anthropic Messages streaming events (https://docs.anthropic.com/en/docs/build-with-claude/streaming)
 * to canonical StreamParts:
 * - message_start -> `response-metadata` (message id, model) and the first usage figures;
 * - content_block_start/delta/stop by `index`: text -> text-*; thinking -> reasoning-* with
 *   `signature_delta` -> `reasoning-signature`; redacted_thinking -> `reasoning-redacted`; tool_use ->
 *   tool-input-* (id `toolu_...`, `input_json_delta` fragments); the JSON-output tool (see
 *   convert-to-anthropic-request.ts) -> text-*; server tool blocks and unknown blocks are skipped;
 * - message_delta -> stop reason, matched stop sequence and final usage; message_stop -> `finish`;
 * - ping -> nothing; error -> an `error` part (the caller stops reading).
 */
import type { StreamPart } from '../../core/stream-parts.ts';
import type { AnthropicBlockView, AnthropicDeltaView, AnthropicEventView, AnthropicMessageView } from './anthropic-wire.ts';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.ts';
import { emptyAnthropicUsageTotals, mapAnthropicUsage, mergeAnthropicUsage, type AnthropicUsageTotals } from './map-anthropic-usage.ts';

interface BlockState {
  kind: 'text' | 'reasoning' | 'tool' | 'skipped';
  id: string;
  /** Tool blocks: any `input_json_delta` seen (else the start's `input` object is the input). */
  sawInputDelta: boolean;
  /** Tool blocks: the `input` object given at block start. */
  initialInput: unknown;
}

export class AnthropicStreamMapper {
  private readonly blocks = new Map<number, BlockState>();
  private usage: AnthropicUsageTotals = emptyAnthropicUsageTotals();
  private stopReason: string | undefined;
  private stopSequence: string | null = null;
  private finished = false;

  /** @param jsonToolName the tool that carries JSON output, whose input is turned back into text. */
  constructor(private readonly jsonToolName: string | undefined) {}

  /** True once `message_stop` was mapped. */
  get sawMessageStop(): boolean {
    return this.finished;
  }

  map(event: AnthropicEventView): StreamPart[] {
    switch (event.type) {
      case 'message_start':
        if (event.usage !== undefined) this.usage = mergeAnthropicUsage(this.usage, event.usage);
        return [
          {
            type: 'response-metadata',
            ...(event.id === undefined ? {} : { upstreamId: event.id }),
            ...(event.model === undefined ? {} : { upstreamModel: event.model }),
          },
        ];
      case 'content_block_start':
        return this.startBlock(event.index, event.block);
      case 'content_block_delta':
        return this.mapDelta(event.index, event.delta);
      case 'content_block_stop':
        return this.stopBlock(event.index);
      case 'message_delta':
        if (event.stopReason !== undefined) this.stopReason = event.stopReason;
        if (event.stopSequence !== null) this.stopSequence = event.stopSequence;
        if (event.usage !== undefined) this.usage = mergeAnthropicUsage(this.usage, event.usage);
        return [];
      case 'message_stop':
        return this.finish();
      case 'ping':
      case 'error': // handled by the caller, which owns error mapping and sanitising
      case 'unknown':
        return [];
    }
  }

  /** Parts for a whole `message` body, as if it had been streamed. */
  mapMessage(message: AnthropicMessageView): StreamPart[] {
    const parts = this.map({ type: 'message_start', id: message.id, model: message.model, usage: message.usage });
    message.content.forEach((block, index) => {
      parts.push(...this.startBlock(index, block));
      parts.push(...this.stopBlock(index));
    });
    parts.push(
      ...this.map({ type: 'message_delta', stopReason: message.stopReason, stopSequence: message.stopSequence, usage: undefined }),
    );
    parts.push(...this.finish());
    return parts;
  }

  private startBlock(index: number, block: AnthropicBlockView): StreamPart[] {
    switch (block.type) {
      case 'text':
        return this.openText(index, block.text);
      case 'thinking': {
        const id = `reasoning-${index}`;
        this.blocks.set(index, { kind: 'reasoning', id, sawInputDelta: false, initialInput: undefined });
        const parts: StreamPart[] = [{ type: 'reasoning-start', id }];
        if (block.thinking !== undefined && block.thinking !== '') parts.push({ type: 'reasoning-delta', id, delta: block.thinking });
        if (block.signature !== undefined && block.signature !== '')
          parts.push({ type: 'reasoning-signature', id, signature: block.signature });
        return parts;
      }
      case 'redacted_thinking': {
        const id = `reasoning-${index}`;
        this.blocks.set(index, { kind: 'skipped', id, sawInputDelta: false, initialInput: undefined });
        return [{ type: 'reasoning-redacted', id, data: block.data ?? '' }];
      }
      case 'tool_use': {
        if (this.jsonToolName !== undefined && block.name === this.jsonToolName) {
          const parts = this.openText(index, undefined);
          const state = this.blocks.get(index);
          if (state !== undefined) state.initialInput = block.input;
          return parts;
        }
        const id = block.id ?? `toolu_${index}`;
        this.blocks.set(index, { kind: 'tool', id, sawInputDelta: false, initialInput: block.input });
        return [{ type: 'tool-input-start', id, toolName: block.name ?? '' }];
      }
      default:
        this.blocks.set(index, { kind: 'skipped', id: `skipped-${index}`, sawInputDelta: false, initialInput: undefined });
        return [];
    }
  }

  private openText(index: number, initialText: string | undefined): StreamPart[] {
    const id = `text-${index}`;
    this.blocks.set(index, { kind: 'text', id, sawInputDelta: false, initialInput: undefined });
    const parts: StreamPart[] = [{ type: 'text-start', id }];
    if (initialText !== undefined && initialText !== '') parts.push({ type: 'text-delta', id, delta: initialText });
    return parts;
  }

  /**
   * Appends the parts of a `content_block_delta` of block `index`, of `deltaType`, whose only string is
   * `value` in `field`: the parts `map` gives for that event's view, without the view (delta-template.ts
   * reads most deltas without a parse).
   */
  mapDeltaValue(index: number, deltaType: string, field: 'text' | 'thinking' | 'partialJson', value: string, parts: StreamPart[]): void {
    const block = this.blocks.get(index);
    if (block === undefined || block.kind === 'skipped' || value === '') return;
    switch (deltaType) {
      case 'text_delta':
        if (block.kind === 'text' && field === 'text') parts.push({ type: 'text-delta', id: block.id, delta: value });
        return;
      case 'thinking_delta':
        if (block.kind === 'reasoning' && field === 'thinking') parts.push({ type: 'reasoning-delta', id: block.id, delta: value });
        return;
      case 'input_json_delta':
        if (field !== 'partialJson') return;
        block.sawInputDelta = true;
        if (block.kind === 'tool') parts.push({ type: 'tool-input-delta', id: block.id, delta: value });
        else if (block.kind === 'text') parts.push({ type: 'text-delta', id: block.id, delta: value });
        return;
      default:
        return; // a signature is never templated; other delta types carry nothing the canonical stream holds
    }
  }

  private mapDelta(index: number, delta: AnthropicDeltaView): StreamPart[] {
    const block = this.blocks.get(index);
    if (block === undefined || block.kind === 'skipped') return [];
    switch (delta.type) {
      case 'text_delta':
        return block.kind === 'text' && delta.text ? [{ type: 'text-delta', id: block.id, delta: delta.text }] : [];
      case 'thinking_delta':
        return block.kind === 'reasoning' && delta.thinking ? [{ type: 'reasoning-delta', id: block.id, delta: delta.thinking }] : [];
      case 'signature_delta':
        return block.kind === 'reasoning' && delta.signature
          ? [{ type: 'reasoning-signature', id: block.id, signature: delta.signature }]
          : [];
      case 'input_json_delta': {
        if (!delta.partialJson) return [];
        block.sawInputDelta = true;
        if (block.kind === 'tool') return [{ type: 'tool-input-delta', id: block.id, delta: delta.partialJson }];
        return block.kind === 'text' ? [{ type: 'text-delta', id: block.id, delta: delta.partialJson }] : [];
      }
      default:
        return []; // citations_delta and future delta types carry nothing the canonical stream holds
    }
  }

  private stopBlock(index: number): StreamPart[] {
    const block = this.blocks.get(index);
    if (block === undefined) return [];
    this.blocks.delete(index);
    const parts: StreamPart[] = [];
    const initialInput = block.initialInput;
    const hasInitialInput = typeof initialInput === 'object' && initialInput !== null && Object.keys(initialInput).length > 0;
    switch (block.kind) {
      case 'text':
        // The JSON-output tool given whole at block start (non-streamed bodies): its input is the text.
        if (!block.sawInputDelta && hasInitialInput) parts.push({ type: 'text-delta', id: block.id, delta: JSON.stringify(initialInput) });
        parts.push({ type: 'text-end', id: block.id });
        break;
      case 'reasoning':
        parts.push({ type: 'reasoning-end', id: block.id });
        break;
      case 'tool':
        if (!block.sawInputDelta && hasInitialInput)
          parts.push({ type: 'tool-input-delta', id: block.id, delta: JSON.stringify(initialInput) });
        parts.push({ type: 'tool-input-end', id: block.id });
        break;
      case 'skipped':
        break;
    }
    return parts;
  }

  private finish(): StreamPart[] {
    if (this.finished) return [];
    this.finished = true;
    const parts: StreamPart[] = [];
    for (const index of [...this.blocks.keys()]) parts.push(...this.stopBlock(index));
    parts.push({
      type: 'finish',
      finishReason: mapAnthropicStopReason(this.stopReason, this.jsonToolName !== undefined),
      stopSequence: this.stopSequence,
      usage: mapAnthropicUsage(this.usage),
    });
    return parts;
  }
}
