/** Small helpers shared by the provider tests. */
import type { GenerationRequest } from '../../src/core/generation.ts';
import type { StreamPart } from '../../src/core/stream-parts.ts';

/** Reads a part stream to its end. */
export async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const collected: StreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

/** Concatenated deltas of one kind. */
export function joinedDeltas(parts: StreamPart[], type: 'text-delta' | 'reasoning-delta' | 'tool-input-delta', id?: string): string {
  return parts
    .filter((part): part is Extract<StreamPart, { type: typeof type }> => part.type === type && (id === undefined || part.id === id))
    .map((part) => part.delta)
    .join('');
}

export function finishOf(parts: StreamPart[]): Extract<StreamPart, { type: 'finish' }> {
  const finish = parts.at(-1);
  if (finish?.type !== 'finish') throw new Error(`The stream did not end with a finish part: ${JSON.stringify(finish)}`);
  return finish;
}

export function userRequest(text: string, extra: Partial<GenerationRequest> = {}): GenerationRequest {
  return { model: 'test-model', messages: [{ role: 'user', content: [{ type: 'text', text }] }], ...extra };
}

/** Rejects with whatever `promise` rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('Expected a rejection.');
}
