/**
 * Assembles a complete (non-streaming) result from the canonical stream, so that streaming and
 * non-streaming answers are built by one mechanism and cannot drift.
 */
import { batchesOf } from './batched.ts';
import type { AssistantContentPart, FinishReason, ReasoningPart, TextPart, ToolCallPart } from './generation.ts';
import type { StreamPart } from './stream-parts.ts';
import type { Usage } from './usage.ts';

export interface GenerationResult {
  /** Content in the order blocks started: text, reasoning and tool calls. */
  content: AssistantContentPart[];
  finishReason: FinishReason;
  stopSequence: string | null;
  usage: Usage;
  upstreamId?: string;
  upstreamModel?: string;
}

/**
 * Folds parts into a result. Throws the ServiceError of an `error` part; throws a plain Error if the
 * stream ends without `finish` (a provider bug, reported as internal_error by the edge).
 */
export async function assembleResult(parts: AsyncIterable<StreamPart>): Promise<GenerationResult> {
  const assembler = new ResultAssembler();
  for await (const batch of batchesOf(parts)) {
    const result = assembler.add(batch);
    if (result !== undefined) return result;
  }
  throw endedWithoutFinish();
}

/**
 * The same fold over parts already in hand (a whole answer: services/generation/whole-answer.ts), with
 * no async step: the same result, the same errors.
 */
export function assembleWholeResult(parts: readonly StreamPart[]): GenerationResult {
  const result = new ResultAssembler().add(parts);
  if (result === undefined) throw endedWithoutFinish();
  return result;
}

function endedWithoutFinish(): Error {
  return new Error('The generation stream ended without a finish part.');
}

/**
 * Open blocks by kind, each by its id: a map per kind, made when the first block of that kind starts
 * (rather than one map keyed by a string built per part).
 */
class ResultAssembler {
  private readonly content: AssistantContentPart[] = [];
  private text: Map<string, TextPart> | undefined;
  private reasoning: Map<string, ReasoningPart> | undefined;
  private tools: Map<string, ToolCallPart> | undefined;
  private upstreamId: string | undefined;
  private upstreamModel: string | undefined;

  /** Folds a batch in; the result once its `finish` part came (later parts are ignored). Throws an `error` part's error. */
  add(batch: readonly StreamPart[]): GenerationResult | undefined {
    const content = this.content;
    for (const part of batch) {
      switch (part.type) {
        case 'text-start': {
          const block: TextPart = { type: 'text', text: '' };
          (this.text ??= new Map()).set(part.id, block);
          content.push(block);
          break;
        }
        case 'text-delta': {
          const block = this.text?.get(part.id);
          if (block !== undefined) block.text += part.delta;
          break;
        }
        case 'reasoning-start': {
          const block: ReasoningPart = { type: 'reasoning', text: '' };
          (this.reasoning ??= new Map()).set(part.id, block);
          content.push(block);
          break;
        }
        case 'reasoning-delta': {
          const block = this.reasoning?.get(part.id);
          if (block !== undefined) block.text += part.delta;
          break;
        }
        case 'reasoning-signature': {
          const block = this.reasoning?.get(part.id);
          if (block !== undefined) block.signature = (block.signature ?? '') + part.signature;
          break;
        }
        case 'reasoning-redacted':
          content.push({ type: 'reasoning', text: '', redactedData: part.data });
          break;
        case 'tool-input-start': {
          const block: ToolCallPart = { type: 'tool-call', id: part.id, name: part.toolName, input: '' };
          (this.tools ??= new Map()).set(part.id, block);
          content.push(block);
          break;
        }
        case 'tool-input-delta': {
          const block = this.tools?.get(part.id);
          if (block !== undefined) block.input += part.delta;
          break;
        }
        case 'tool-input-end': {
          const block = this.tools?.get(part.id);
          if (block !== undefined && block.input.trim() === '') block.input = '{}';
          break;
        }
        case 'text-end':
        case 'reasoning-end':
          break;
        case 'response-metadata':
          this.upstreamId = part.upstreamId ?? this.upstreamId;
          this.upstreamModel = part.upstreamModel ?? this.upstreamModel;
          break;
        case 'error':
          throw part.error;
        case 'finish': {
          const result: GenerationResult = {
            content,
            finishReason: part.finishReason,
            stopSequence: part.stopSequence ?? null,
            usage: part.usage,
          };
          if (this.upstreamId !== undefined) result.upstreamId = this.upstreamId;
          if (this.upstreamModel !== undefined) result.upstreamModel = this.upstreamModel;
          return result;
        }
      }
    }
    return undefined;
  }
}
