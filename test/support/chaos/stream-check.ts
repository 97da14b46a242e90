/**
 * Checks a streamed answer as a client reads it: where its end event is (`data: [DONE]` for chat
 * completions, `message_stop` for messages, `response.completed` for responses), how many bytes came
 * after it (there must be none), the text it carried, and whether it held an error event.
 */

export type StreamFormat = 'chat' | 'messages' | 'responses';

export interface StreamCheck {
  /** Whether the end event arrived. */
  ended: boolean;
  /** Bytes received after the end event (its blank line included in the event). */
  bytesAfterEnd: number;
  /** The answer's text, joined from its deltas (up to the end event). */
  text: string;
  /** An `error` event (or an `{"error": ...}` data line) before the end, if any. */
  error: string | undefined;
}

interface SseEvent {
  event: string | undefined;
  data: string;
}

/** Splits SSE text into events (blank-line separated), ignoring comments. */
function parseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (event !== undefined || data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return events;
}

/** Byte offset just past the blank line that ends the event starting at `marker`, or -1. */
function endOffset(body: Buffer, marker: string): number {
  const at = body.indexOf(marker);
  if (at < 0) return -1;
  const blank = body.indexOf('\n\n', at);
  return blank < 0 ? body.length : blank + 2;
}

const END_MARKERS: Record<StreamFormat, string> = {
  chat: 'data: [DONE]',
  messages: 'event: message_stop',
  responses: 'event: response.completed',
};

function deltaText(format: StreamFormat, event: SseEvent): string {
  if (event.data === '' || event.data === '[DONE]') return '';
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(event.data) as Record<string, unknown>;
  } catch {
    return '';
  }
  if (format === 'chat') {
    const choices = parsed['choices'] as Array<{ delta?: { content?: string | null } }> | undefined;
    return choices?.[0]?.delta?.content ?? '';
  }
  if (format === 'messages') {
    const delta = parsed['delta'] as { type?: string; text?: string } | undefined;
    return parsed['type'] === 'content_block_delta' && delta?.type === 'text_delta' ? (delta.text ?? '') : '';
  }
  return parsed['type'] === 'response.output_text.delta' ? String(parsed['delta'] ?? '') : '';
}

function errorOf(event: SseEvent): string | undefined {
  if (event.event === 'error') return event.data;
  if (event.data.startsWith('{"error"')) return event.data;
  return undefined;
}

export function checkStream(format: StreamFormat, body: Buffer): StreamCheck {
  const end = endOffset(body, END_MARKERS[format]);
  const head = end < 0 ? body : body.subarray(0, end);
  const events = parseEvents(head.toString('utf8'));
  return {
    ended: end >= 0,
    bytesAfterEnd: end < 0 ? 0 : body.length - end,
    text: events.map((event) => deltaText(format, event)).join(''),
    error: events.map(errorOf).find((found) => found !== undefined),
  };
}
