import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SseParser, type SseMessage } from '../../../src/providers/shared/sse-parser.ts';

function parseAll(chunks: Array<Uint8Array | string>): SseMessage[] {
  const parser = new SseParser();
  const messages: SseMessage[] = [];
  for (const chunk of chunks) messages.push(...parser.push(chunk));
  messages.push(...parser.end());
  return messages;
}

/** Every way of cutting `bytes` in two, plus one byte at a time. */
function everySplit(bytes: Uint8Array): Uint8Array[][] {
  const splits: Uint8Array[][] = [];
  for (let cut = 0; cut <= bytes.length; cut++) splits.push([bytes.subarray(0, cut), bytes.subarray(cut)]);
  splits.push([...bytes].map((byte) => Uint8Array.of(byte)));
  return splits;
}

const STREAM = [
  ': keep-alive comment',
  'event: message_start',
  'data: {"type":"message_start","text":"héllo wörld 😀"}',
  '',
  'data: first line',
  'data: second line',
  'id: 7',
  '',
  'event: ping',
  'data: {}',
  '',
  'data: [DONE]',
  '',
  '',
].join('\n');

const EXPECTED: SseMessage[] = [
  { event: 'message_start', data: '{"type":"message_start","text":"héllo wörld 😀"}', id: undefined },
  { event: undefined, data: 'first line\nsecond line', id: '7' },
  { event: 'ping', data: '{}', id: '7' },
  { event: undefined, data: '[DONE]', id: '7' },
];

describe('SseParser', () => {
  test('parses events, comments, multi-line data and ids', () => {
    assert.deepEqual(parseAll([STREAM]), EXPECTED);
  });

  test('gives the same events whatever byte the stream is split at (LF line ends)', () => {
    for (const chunks of everySplit(Buffer.from(STREAM, 'utf8'))) assert.deepEqual(parseAll(chunks), EXPECTED);
  });

  test('gives the same events whatever byte the stream is split at (CRLF line ends)', () => {
    const crlf = Buffer.from(STREAM.replaceAll('\n', '\r\n'), 'utf8');
    for (const chunks of everySplit(crlf)) assert.deepEqual(parseAll(chunks), EXPECTED);
  });

  test('gives the same events whatever byte the stream is split at (CR line ends)', () => {
    const cr = Buffer.from(STREAM.replaceAll('\n', '\r'), 'utf8');
    for (const chunks of everySplit(cr)) assert.deepEqual(parseAll(chunks), EXPECTED);
  });

  test('ignores a byte order mark at the start and takes "data:" without a space', () => {
    assert.deepEqual(parseAll(['\uFEFFdata:x\n\n']), [{ event: undefined, data: 'x', id: undefined }]);
  });

  test('drops one byte order mark from the bytes, and reads invalid UTF-8 as U+FFFD, wherever the bytes are split', () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('data: a'),
      Buffer.from([0xff, 0xe2, 0x82]),
      Buffer.from('b \uFEFF😀\n\n'),
    ]);
    const expected: SseMessage[] = [{ event: undefined, data: 'a\uFFFD\uFFFDb \uFEFF😀', id: undefined }];
    for (const chunks of everySplit(bytes)) assert.deepEqual(parseAll(chunks), expected);
  });

  test('dispatches nothing for events without data, and resets the event type', () => {
    assert.deepEqual(parseAll(['event: lonely\n\ndata: y\n\n']), [{ event: undefined, data: 'y', id: undefined }]);
  });

  test('a field without a colon is a field with an empty value', () => {
    assert.deepEqual(parseAll(['data\n\n']), [{ event: undefined, data: '', id: undefined }]);
  });

  test('dispatches the last event when the stream ends without a blank line', () => {
    assert.deepEqual(parseAll(['data: a\n\ndata: b']), [
      { event: undefined, data: 'a', id: undefined },
      { event: undefined, data: 'b', id: undefined },
    ]);
  });

  test('the parser reads an async byte stream, read by read', async () => {
    async function* body(): AsyncGenerator<Uint8Array> {
      const bytes = Buffer.from(STREAM, 'utf8');
      for (let index = 0; index < bytes.length; index += 5) yield bytes.subarray(index, index + 5);
    }
    const parser = new SseParser();
    const messages: SseMessage[] = [];
    for await (const chunk of body()) messages.push(...parser.push(chunk));
    messages.push(...parser.end());
    assert.deepEqual(messages, EXPECTED);
  });
});
