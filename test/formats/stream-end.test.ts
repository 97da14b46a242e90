/**
 * A stream's end event is its last byte: when the source fails after `finish` (the usage meter's
 * settle failing in the generation service's clean-up, as a Redis outage did), no encoder may send
 * anything after `[DONE]`, `message_stop` or `response.completed` (issue 29: the tail was re-sent,
 * then an error event).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sequenceBlocks } from '../../src/core/sequence-blocks.ts';
import type { SseEvent } from '../../src/core/sse-event.ts';
import type { StreamPart } from '../../src/core/stream-parts.ts';
import { encodeMessagesStream } from '../../src/formats/anthropic-messages/encode-stream.ts';
import { encodeChatCompletionStream } from '../../src/formats/openai-chat/encode-stream.ts';
import { decodeResponsesRequest } from '../../src/formats/openai-responses/decode-request.ts';
import { createResponseContext } from '../../src/formats/openai-responses/encode-response.ts';
import { encodeResponseStream } from '../../src/formats/openai-responses/encode-stream.ts';
import { textParts } from './openai-chat/stream-parts-fixtures.ts';

/** Yields the parts (in one batch or one by one), then fails in its clean-up, after the consumer is done. */
async function* failingAfterFinish(parts: readonly StreamPart[]): AsyncGenerator<StreamPart> {
  try {
    for (const part of parts) yield part;
    // Held open after `finish`, as a live upstream is until the consumer lets go.
    await new Promise(() => undefined);
  } finally {
    // eslint-disable-next-line no-unsafe-finally
    throw new Error('settle failed: the rate-limit store is unavailable');
  }
}

async function collect(events: AsyncIterable<SseEvent>): Promise<SseEvent[]> {
  const seen: SseEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('no bytes after the end event when the source fails in its clean-up', () => {
  test('chat completions: [DONE] is the last event, sent once', async () => {
    const events = await collect(
      encodeChatCompletionStream(
        sequenceBlocks(failingAfterFinish(textParts)),
        { id: 'chatcmpl-x', created: 1, model: 'm' },
        { includeUsage: true },
      ),
    );
    const data = events.map((event) => event.data);
    assert.equal(data.at(-1), '[DONE]');
    assert.equal(data.filter((value) => value === '[DONE]').length, 1);
    assert.equal(data.filter((value) => typeof value === 'string' && value.includes('"finish_reason":"stop"')).length, 1);
    assert.ok(!data.some((value) => typeof value === 'string' && value.includes('"error"')));
  });

  test('messages: message_stop is the last event, sent once', async () => {
    const events = await collect(
      encodeMessagesStream(sequenceBlocks(failingAfterFinish(textParts)), { model: 'm', inputTokens: 1, messageId: 'msg_x' }),
    );
    const names = events.map((event) => event.event);
    assert.equal(names.at(-1), 'message_stop');
    assert.equal(names.filter((name) => name === 'message_stop').length, 1);
    assert.equal(names.filter((name) => name === 'message_delta').length, 1);
    assert.ok(!names.includes('error'));
  });

  test('responses: response.completed is the last event, sent once', async () => {
    const context = createResponseContext(decodeResponsesRequest({ model: 'm', input: 'Hi', max_output_tokens: 50 }).options);
    const events = await collect(encodeResponseStream(sequenceBlocks(failingAfterFinish(textParts)), context));
    const names = events.map((event) => event.event);
    assert.equal(names.at(-1), 'response.completed');
    assert.equal(names.filter((name) => name === 'response.completed').length, 1);
    assert.ok(!names.includes('error') && !names.includes('response.failed'));
  });
});
