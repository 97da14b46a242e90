/**
 * Maps `chat.completion.chunk` events of the OpenAI Chat Completions streaming API
 * (https://platform.openai.com/docs/api-reference/chat-streaming) to canonical StreamParts.
 *
 * - `delta.content` -> text block; `delta.reasoning_content` / `delta.reasoning` -> reasoning block;
 *   `delta.refusal` -> text (the caller should read the refusal).
 * - `delta.tool_calls[]` fragments, keyed by `index`: the first fragment with a name starts the call
 *   (`tool-input-start` with its id, generated when a server sends none), `function.arguments`
 *   fragments become `tool-input-delta`s. Servers stream calls one after another, so a new call ends
 *   the previous one; blocks therefore never interleave.
 * - `finish_reason` is remembered; usage (a later chunk with empty `choices`, or the same chunk) too.
 *   The `finish` part is emitted by `finish()` when `[DONE]` (or the end of the body) arrives, so that
 *   usage sent after the finish reason is not lost.
 * Only choice 0 is read: Switchyard asks for one choice.
 */
import { newId } from '../../core/ids.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { answeredUsage, type Usage } from '../../core/usage.ts';
import { mapOpenAICompatibleFinishReason } from './map-openai-compatible-finish-reason.ts';
import { mapOpenAICompatibleUsage } from './map-openai-compatible-usage.ts';
import type { OpenAIChunkView, OpenAICompletionView } from './openai-compatible-wire.ts';

interface ToolCallState {
  id: string;
  name: string | undefined;
  started: boolean;
  ended: boolean;
  /** Argument fragments received before the name was known. */
  pendingArguments: string;
}

export class OpenAICompatibleStreamMapper {
  private metadataSent = false;
  private openBlock: { kind: 'text' | 'reasoning'; id: string } | undefined;
  private blockCount = 0;
  private readonly toolCalls = new Map<number, ToolCallState>();
  private openToolIndex: number | undefined;
  private finishReason: string | undefined;
  private usage: Usage | undefined;
  private choiceSeen = false;

  /** True once a chunk carried a choice: a stream without any is no answer at all. */
  get sawChoice(): boolean {
    return this.choiceSeen;
  }

  /** True once a choice reported its finish reason. */
  get sawFinishReason(): boolean {
    return this.finishReason !== undefined;
  }

  /** Parts for one chunk, in order. */
  map(chunk: OpenAIChunkView): StreamPart[] {
    const parts: StreamPart[] = [];
    this.mapInto(chunk, parts);
    return parts;
  }

  /** Appends the parts for one chunk to `parts` (the parts of one upstream read share one array). */
  mapInto(chunk: OpenAIChunkView, parts: StreamPart[]): void {
    if (!this.metadataSent) this.noteMetadata(chunk.id, chunk.model, parts);
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      this.choiceSeen = true;
      if (choice.reasoning !== undefined && choice.reasoning !== '') this.appendBlock('reasoning', choice.reasoning, parts);
      if (choice.content !== undefined && choice.content !== '') this.appendBlock('text', choice.content, parts);
      if (choice.refusal !== undefined && choice.refusal !== '') this.appendBlock('text', choice.refusal, parts);
      for (const call of choice.toolCalls) this.appendToolCall(call.index, call.id, call.name, call.arguments, parts);
      if (choice.finishReason !== undefined) this.finishReason = choice.finishReason;
    }
    if (chunk.usage !== undefined) this.usage = mapOpenAICompatibleUsage(chunk.usage);
  }

  /**
   * Appends the parts of a chunk that is one plain delta: one choice, index 0, `delta` as its text or
   * reasoning, nothing else (no tool call, finish reason, usage or error). The same parts `mapInto`
   * makes for that chunk's view, without the view: most chunks of a stream are these
   * (chunk-template.ts reads them without a parse).
   */
  mapDelta(kind: 'text' | 'reasoning', delta: string, id: string | undefined, model: string | undefined, parts: StreamPart[]): void {
    if (!this.metadataSent) this.noteMetadata(id, model, parts);
    this.choiceSeen = true;
    if (delta !== '') this.appendBlock(kind, delta, parts);
  }

  /** The upstream's id and model, once, as soon as a chunk carries either. */
  private noteMetadata(id: string | undefined, model: string | undefined, parts: StreamPart[]): void {
    if (id === undefined && model === undefined) return;
    this.metadataSent = true;
    parts.push({
      type: 'response-metadata',
      ...(id === undefined ? {} : { upstreamId: id }),
      ...(model === undefined ? {} : { upstreamModel: model }),
    });
  }

  /**
   * Closes open blocks and emits `finish`. Without upstream usage the figures are zero and marked
   * `estimated`, which tells the generation service to count them locally.
   */
  finish(): StreamPart[] {
    const parts: StreamPart[] = [];
    this.closeBlock(parts);
    this.endOpenToolCall(parts);
    // A call whose name never came is still reported, so the caller sees every call the model made.
    for (const call of this.toolCalls.values()) {
      if (!call.started) {
        this.startToolCall(call, parts);
        this.endToolCall(call, parts);
      }
    }
    parts.push({
      type: 'finish',
      finishReason: mapOpenAICompatibleFinishReason(this.finishReason),
      stopSequence: null,
      // No usage reported (a server ignoring include_usage): one request, figures counted by the service.
      usage: this.usage ?? answeredUsage({ estimated: true }),
    });
    return parts;
  }

  /** Parts for a whole `chat.completion` body, as if it had been streamed. */
  mapCompletion(completion: OpenAICompletionView): StreamPart[] {
    const parts = this.map({
      id: completion.id,
      model: completion.model,
      choices: [
        {
          index: 0,
          content: completion.content,
          reasoning: completion.reasoning,
          refusal: completion.refusal,
          toolCalls: completion.toolCalls.map((call, index) => ({ index, id: call.id, name: call.name, arguments: call.arguments })),
          finishReason: completion.finishReason ?? 'stop',
        },
      ],
      usage: completion.usage,
      error: undefined,
    });
    parts.push(...this.finish());
    return parts;
  }

  private appendBlock(kind: 'text' | 'reasoning', delta: string, parts: StreamPart[]): void {
    this.endOpenToolCall(parts);
    if (this.openBlock?.kind !== kind) {
      this.closeBlock(parts);
      const id = `${kind}-${this.blockCount++}`;
      this.openBlock = { kind, id };
      parts.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', id });
    }
    const id = this.openBlock.id;
    parts.push(kind === 'text' ? { type: 'text-delta', id, delta } : { type: 'reasoning-delta', id, delta });
  }

  private closeBlock(parts: StreamPart[]): void {
    if (this.openBlock === undefined) return;
    const { kind, id } = this.openBlock;
    parts.push({ type: kind === 'text' ? 'text-end' : 'reasoning-end', id });
    this.openBlock = undefined;
  }

  private appendToolCall(
    index: number,
    id: string | undefined,
    name: string | undefined,
    argumentsFragment: string | undefined,
    parts: StreamPart[],
  ): void {
    let call = this.toolCalls.get(index);
    if (call === undefined) {
      call = { id: id || newId.toolCall(), name: undefined, started: false, ended: false, pendingArguments: '' };
      this.toolCalls.set(index, call);
    }
    if (call.ended) return; // a late fragment of a call already closed: servers do not send these
    if (name !== undefined && name !== '' && call.name === undefined) call.name = name;
    if (!call.started && call.name !== undefined) {
      this.closeBlock(parts);
      if (this.openToolIndex !== undefined && this.openToolIndex !== index) this.endOpenToolCall(parts);
      this.startToolCall(call, parts);
      this.openToolIndex = index;
    }
    if (argumentsFragment === undefined || argumentsFragment === '') return;
    if (call.started) parts.push({ type: 'tool-input-delta', id: call.id, delta: argumentsFragment });
    else call.pendingArguments += argumentsFragment;
  }

  private startToolCall(call: ToolCallState, parts: StreamPart[]): void {
    call.started = true;
    parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name ?? '' });
    if (call.pendingArguments !== '') {
      parts.push({ type: 'tool-input-delta', id: call.id, delta: call.pendingArguments });
      call.pendingArguments = '';
    }
  }

  private endToolCall(call: ToolCallState, parts: StreamPart[]): void {
    if (call.ended) return;
    call.ended = true;
    parts.push({ type: 'tool-input-end', id: call.id });
  }

  private endOpenToolCall(parts: StreamPart[]): void {
    if (this.openToolIndex === undefined) return;
    const call = this.toolCalls.get(this.openToolIndex);
    if (call !== undefined) this.endToolCall(call, parts);
    this.openToolIndex = undefined;
  }
}
