/**
 * Assembles a complete (non-streaming) result from the canonical stream, so that streaming and
 * non-streaming answers are built by one mechanism and cannot drift.
 */
import { batchesOf } from './batched.ts';
import type { AssistantContentPart, FinishReason } from './generation.ts';
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
  const content: AssistantContentPart[] = [];
  const open = new Map<string, AssistantContentPart>();
  let upstreamId: string | undefined;
  let upstreamModel: string | undefined;
  for await (const batch of batchesOf(parts))
    for (const part of batch) {
      switch (part.type) {
        case 'text-start': {
          const block: AssistantContentPart = { type: 'text', text: '' };
          open.set(`text:${part.id}`, block);
          content.push(block);
          break;
        }
        case 'text-delta': {
          const block = open.get(`text:${part.id}`);
          if (block?.type === 'text') block.text += part.delta;
          break;
        }
        case 'reasoning-start': {
          const block: AssistantContentPart = { type: 'reasoning', text: '' };
          open.set(`reasoning:${part.id}`, block);
          content.push(block);
          break;
        }
        case 'reasoning-delta': {
          const block = open.get(`reasoning:${part.id}`);
          if (block?.type === 'reasoning') block.text += part.delta;
          break;
        }
        case 'reasoning-signature': {
          const block = open.get(`reasoning:${part.id}`);
          if (block?.type === 'reasoning') block.signature = (block.signature ?? '') + part.signature;
          break;
        }
        case 'reasoning-redacted':
          content.push({ type: 'reasoning', text: '', redactedData: part.data });
          break;
        case 'tool-input-start': {
          const block: AssistantContentPart = { type: 'tool-call', id: part.id, name: part.toolName, input: '' };
          open.set(`tool:${part.id}`, block);
          content.push(block);
          break;
        }
        case 'tool-input-delta': {
          const block = open.get(`tool:${part.id}`);
          if (block?.type === 'tool-call') block.input += part.delta;
          break;
        }
        case 'tool-input-end': {
          const block = open.get(`tool:${part.id}`);
          if (block?.type === 'tool-call' && block.input.trim() === '') block.input = '{}';
          break;
        }
        case 'text-end':
        case 'reasoning-end':
          break;
        case 'response-metadata':
          upstreamId = part.upstreamId ?? upstreamId;
          upstreamModel = part.upstreamModel ?? upstreamModel;
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
          if (upstreamId !== undefined) result.upstreamId = upstreamId;
          if (upstreamModel !== undefined) result.upstreamModel = upstreamModel;
          return result;
        }
      }
    }
  throw new Error('The generation stream ended without a finish part.');
}
