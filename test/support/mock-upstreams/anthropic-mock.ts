/**
 * A mock Anthropic Messages upstream (`POST /v1/messages`, wire format:
 * https://docs.anthropic.com/en/api/messages and .../build-with-claude/streaming). Scripted replies
 * stream as named events (message_start, content_block_start/delta/stop for thinking, redacted
 * thinking, text and tool_use blocks, message_delta, message_stop), or come as one `message` body when
 * the request does not stream. By default it answers `Mock: <last user text>`.
 */
import { MockUpstreamServer, type MockBehaviour, type MockSseEvent, type RecordedRequest } from './mock-upstream-server.ts';
import { wordPieces } from './openai-compatible-mock.ts';

export interface MockAnthropicToolUse {
  /** Defaults to `toolu_mock<position>`. */
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

export interface MockAnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export interface MockAnthropicReply {
  thinking?: { text: string; signature: string };
  /** A `redacted_thinking` block with this opaque data. */
  redactedThinking?: string;
  text?: string;
  toolUses?: MockAnthropicToolUse[];
  /** Defaults to `tool_use` when there are tool uses, else `end_turn`. */
  stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';
  stopSequence?: string | null;
  usage?: MockAnthropicUsage;
  /** Streams: an `error` event sent after the content instead of message_delta/message_stop. */
  errorEvent?: { type: string; message: string };
  model?: string;
  id?: string;
}

const ERROR_TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** The last user message's text in a Messages request body. */
export function lastAnthropicUserText(body: unknown): string {
  const messages = (body as { messages?: Array<{ role?: string; content?: unknown }> } | undefined)?.messages ?? [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (Array.isArray(message.content)) {
      return message.content
        .filter((block): block is { type: 'text'; text: string } => (block as { type?: string }).type === 'text')
        .map((block) => block.text)
        .join('\n');
    }
  }
  return '';
}

function usageOf(reply: MockAnthropicReply): Required<MockAnthropicUsage> {
  const output = wordPieces(reply.text ?? '').length + wordPieces(reply.thinking?.text ?? '').length + (reply.toolUses?.length ?? 0) * 8;
  return { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 10, output_tokens: output, ...reply.usage };
}

function named(data: { type: string } & Record<string, unknown>): MockSseEvent {
  return { event: data.type, data };
}

export class MockAnthropicServer extends MockUpstreamServer<MockAnthropicReply> {
  /** The `baseUrl` of an anthropic provider (no `/v1`; the provider adds `/v1/messages`). */
  get baseUrl(): string {
    return this.url;
  }

  protected defaultBehaviour(request: RecordedRequest): MockBehaviour<MockAnthropicReply> {
    if (request.path.startsWith('/v1/messages')) return { type: 'reply', reply: { text: `Mock: ${lastAnthropicUserText(request.body)}` } };
    return { type: 'error', status: 404, message: `No mock behaviour for ${request.method} ${request.path}.` };
  }

  protected errorBody(status: number, message: string, errorType: string | undefined): unknown {
    return { type: 'error', error: { type: errorType ?? ERROR_TYPE_BY_STATUS[status] ?? 'api_error', message }, request_id: 'req_mock' };
  }

  protected replyEvents(reply: MockAnthropicReply, request: RecordedRequest): MockSseEvent[] {
    const usage = usageOf(reply);
    const events: MockSseEvent[] = [
      named({
        type: 'message_start',
        message: {
          id: reply.id ?? 'msg_mock000000000000000000',
          type: 'message',
          role: 'assistant',
          model: reply.model ?? String((request.body as { model?: unknown }).model ?? 'mock-model'),
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      }),
    ];
    let index = 0;
    if (reply.thinking !== undefined) {
      events.push(named({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      for (const piece of wordPieces(reply.thinking.text)) {
        events.push(named({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } }));
      }
      events.push(named({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: reply.thinking.signature } }));
      events.push(named({ type: 'content_block_stop', index }));
      index++;
    }
    if (reply.redactedThinking !== undefined) {
      events.push(
        named({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: reply.redactedThinking } }),
      );
      events.push(named({ type: 'content_block_stop', index }));
      index++;
    }
    if (reply.text !== undefined) {
      events.push(named({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      events.push(named({ type: 'ping' }));
      for (const piece of wordPieces(reply.text))
        events.push(named({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }));
      events.push(named({ type: 'content_block_stop', index }));
      index++;
    }
    (reply.toolUses ?? []).forEach((toolUse, position) => {
      events.push(
        named({
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: toolUse.id ?? `toolu_mock${position}`, name: toolUse.name, input: {} },
        }),
      );
      const json = JSON.stringify(toolUse.input);
      const half = Math.ceil(json.length / 2);
      for (const piece of ['', json.slice(0, half), json.slice(half)]) {
        events.push(named({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }));
      }
      events.push(named({ type: 'content_block_stop', index }));
      index++;
    });
    if (reply.errorEvent !== undefined) {
      events.push(named({ type: 'error', error: reply.errorEvent }));
      return events;
    }
    events.push(
      named({
        type: 'message_delta',
        delta: {
          stop_reason: reply.stopReason ?? ((reply.toolUses ?? []).length > 0 ? 'tool_use' : 'end_turn'),
          stop_sequence: reply.stopSequence ?? null,
        },
        usage: { output_tokens: usage.output_tokens },
      }),
    );
    events.push(named({ type: 'message_stop' }));
    return events;
  }

  protected replyBody(reply: MockAnthropicReply, request: RecordedRequest): unknown {
    const content: unknown[] = [];
    if (reply.thinking !== undefined)
      content.push({ type: 'thinking', thinking: reply.thinking.text, signature: reply.thinking.signature });
    if (reply.redactedThinking !== undefined) content.push({ type: 'redacted_thinking', data: reply.redactedThinking });
    if (reply.text !== undefined) content.push({ type: 'text', text: reply.text });
    (reply.toolUses ?? []).forEach((toolUse, position) =>
      content.push({ type: 'tool_use', id: toolUse.id ?? `toolu_mock${position}`, name: toolUse.name, input: toolUse.input }),
    );
    return {
      id: reply.id ?? 'msg_mock000000000000000000',
      type: 'message',
      role: 'assistant',
      model: reply.model ?? String((request.body as { model?: unknown }).model ?? 'mock-model'),
      content,
      stop_reason: reply.stopReason ?? ((reply.toolUses ?? []).length > 0 ? 'tool_use' : 'end_turn'),
      stop_sequence: reply.stopSequence ?? null,
      usage: usageOf(reply),
    };
  }
}
