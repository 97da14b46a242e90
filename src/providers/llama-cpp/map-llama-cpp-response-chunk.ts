/**
 * Maps node-llama-cpp's streamed response chunks (node-llama-cpp 3.x,
 * `dist/evaluator/LlamaChat/LlamaChat.d.ts`, `LlamaChatResponseChunk` passed to `onResponseChunk`) to
 * canonical stream parts. Main-response chunks become a text block; segment chunks (`thought`, and
 * gpt-oss style `comment`, both outside the final answer) become a reasoning block. A block is opened
 * on its first non-empty text, so a response without reasoning yields no empty reasoning block.
 *
 * Function calls stream from `onFunctionCallParamsChunk` (`LlamaChatResponseFunctionCallParamsChunk`)
 * as tool-input blocks with fresh `call_` ids. The grammar node-llama-cpp generates arguments under
 * ends with newlines after the JSON; trailing whitespace is held back until more JSON follows, so the
 * deltas concatenate to the JSON text alone.
 */
import type { LlamaChatResponseChunk, LlamaChatResponseFunctionCallParamsChunk } from 'node-llama-cpp';
import { newId } from '../../core/ids.ts';
import type { StreamPart } from '../../core/stream-parts.ts';

interface CallState {
  id: string;
  /** Whitespace after the last JSON character seen, not sent yet. */
  pendingWhitespace: string;
  sentAnything: boolean;
  ended: boolean;
}

/** A function call as node-llama-cpp's final response lists it. */
export interface LlamaCppFunctionCall {
  functionName: string;
  params: unknown;
}

export class LlamaCppChunkMapper {
  private openBlock: { kind: 'text' | 'reasoning'; id: string } | undefined;
  private blockCount = 0;
  private readonly calls = new Map<number, CallState>();

  constructor(private readonly newCallId: () => string = newId.toolCall) {}

  mapFunctionCallChunk(chunk: LlamaChatResponseFunctionCallParamsChunk): StreamPart[] {
    const parts: StreamPart[] = [];
    let call = this.calls.get(chunk.callIndex);
    if (call === undefined) {
      this.closeInto(parts);
      call = { id: this.newCallId(), pendingWhitespace: '', sentAnything: false, ended: false };
      this.calls.set(chunk.callIndex, call);
      parts.push({ type: 'tool-input-start', id: call.id, toolName: chunk.functionName });
    }
    if (call.ended) return parts;
    const text = call.pendingWhitespace + chunk.paramsChunk;
    const json = text.trimEnd();
    call.pendingWhitespace = text.slice(json.length);
    if (json !== '') {
      parts.push({ type: 'tool-input-delta', id: call.id, delta: json });
      call.sentAnything = true;
    }
    if (chunk.done) this.endCall(call, parts);
    return parts;
  }

  /** Completes the calls of the final response that streamed no (or no final) params chunk. */
  finishFunctionCalls(functionCalls: readonly LlamaCppFunctionCall[]): StreamPart[] {
    const parts: StreamPart[] = [];
    functionCalls.forEach((functionCall, index) => {
      let call = this.calls.get(index);
      if (call === undefined) {
        this.closeInto(parts);
        call = { id: this.newCallId(), pendingWhitespace: '', sentAnything: false, ended: false };
        this.calls.set(index, call);
        parts.push({ type: 'tool-input-start', id: call.id, toolName: functionCall.functionName });
        parts.push({ type: 'tool-input-delta', id: call.id, delta: JSON.stringify(functionCall.params ?? {}) });
        call.sentAnything = true;
      }
      if (!call.ended) this.endCall(call, parts);
    });
    return parts;
  }

  private endCall(call: CallState, parts: StreamPart[]): void {
    if (!call.sentAnything) parts.push({ type: 'tool-input-delta', id: call.id, delta: '{}' });
    parts.push({ type: 'tool-input-end', id: call.id });
    call.ended = true;
  }

  map(chunk: LlamaChatResponseChunk): StreamPart[] {
    const parts: StreamPart[] = [];
    const kind = chunk.type === 'segment' ? 'reasoning' : 'text';
    if (chunk.text !== '') {
      if (this.openBlock?.kind !== kind) {
        this.closeInto(parts);
        const id = String(this.blockCount++);
        this.openBlock = { kind, id };
        parts.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', id });
      }
      const id = this.openBlock.id;
      parts.push(kind === 'text' ? { type: 'text-delta', id, delta: chunk.text } : { type: 'reasoning-delta', id, delta: chunk.text });
    }
    if (chunk.type === 'segment' && chunk.segmentEndTime !== undefined && this.openBlock?.kind === 'reasoning') this.closeInto(parts);
    return parts;
  }

  /** Closes the open block, if any; call before `finish`. */
  finish(): StreamPart[] {
    const parts: StreamPart[] = [];
    this.closeInto(parts);
    return parts;
  }

  private closeInto(parts: StreamPart[]): void {
    if (this.openBlock === undefined) return;
    const { kind, id } = this.openBlock;
    parts.push({ type: kind === 'text' ? 'text-end' : 'reasoning-end', id });
    this.openBlock = undefined;
  }
}
