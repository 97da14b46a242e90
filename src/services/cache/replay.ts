/**
 * A cached answer as a generation stream again: the stored parts in their order, in one batch (the
 * encoders and the SSE writer take batches), with fresh tool-call ids so that no two answers share one.
 * Response ids and timestamps are fresh anyway: each format's encoder makes its own.
 */
import { batched, type Batched } from '../../core/batched.ts';
import { randomAlphanumeric } from '../../core/ids.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import type { CachedAnswer } from './cached-answer.ts';

/** A new id with the old one's prefix (`call_`, `toolu_`, ...). */
function freshId(id: string): string {
  const underscore = id.indexOf('_');
  return `${underscore > 0 ? id.slice(0, underscore + 1) : 'call_'}${randomAlphanumeric(24)}`;
}

export function replayParts(answer: CachedAnswer): Batched<StreamPart> {
  return batched(async function* () {
    const ids = new Map<string, string>();
    const parts: StreamPart[] = [];
    for (const part of answer.parts) {
      if (part.type === 'tool-input-start' || part.type === 'tool-input-delta' || part.type === 'tool-input-end') {
        let id = ids.get(part.id);
        if (id === undefined) ids.set(part.id, (id = freshId(part.id)));
        parts.push({ ...part, id });
      } else {
        parts.push(part);
      }
    }
    yield parts;
  });
}
