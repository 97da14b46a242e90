/**
 * A mock OpenAI-compatible upstream (`POST /v1/chat/completions`, OpenAI wire format:
 * https://platform.openai.com/docs/api-reference/chat). Scripted replies stream as
 * `chat.completion.chunk` events (role chunk, deltas, finish chunk, usage chunk when
 * `stream_options.include_usage`, `[DONE]`), or come as one `chat.completion` body when the request
 * does not stream. By default it answers `Mock: <last user text>`; other paths answer 404 unless a
 * behaviour was queued (queue `{ type: 'json', body }` to mock embeddings, moderations or images).
 */
import { MockUpstreamServer, type MockSseEvent, type RecordedRequest, type MockBehaviour } from './mock-upstream-server.ts';

export interface MockOpenAIToolCall {
  /** Defaults to `call_mock<position>`. */
  id?: string;
  name: string;
  /** JSON text, or an object that is JSON-encoded. */
  arguments: string | Record<string, unknown>;
}

export interface MockOpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export interface MockOpenAIReply {
  text?: string;
  /** Streamed as `reasoning_content` deltas (vLLM, DeepSeek style). */
  reasoning?: string;
  toolCalls?: MockOpenAIToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  /** Reported usage; `null` leaves usage out (servers that ignore include_usage). Default: small fixed figures. */
  usage?: MockOpenAIUsage | null;
  model?: string;
  id?: string;
}

/** Splits text into word-sized pieces (leading whitespace attached). */
export function wordPieces(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? (text === '' ? [] : [text]);
}

function argumentText(call: MockOpenAIToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function thirds(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3));
  const pieces: string[] = [];
  for (let index = 0; index < text.length; index += size) pieces.push(text.slice(index, index + size));
  return pieces;
}

/** The last user message's text in an OpenAI chat request body. */
export function lastUserText(body: unknown): string {
  const messages = (body as { messages?: Array<{ role?: string; content?: unknown }> } | undefined)?.messages ?? [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (Array.isArray(message.content)) {
      return message.content
        .filter((part): part is { type: 'text'; text: string } => (part as { type?: string }).type === 'text')
        .map((part) => part.text)
        .join('\n');
    }
  }
  return '';
}

function defaultUsage(reply: MockOpenAIReply): MockOpenAIUsage {
  const completion = wordPieces(reply.text ?? '').length + wordPieces(reply.reasoning ?? '').length + (reply.toolCalls?.length ?? 0) * 8;
  return { prompt_tokens: 10, completion_tokens: completion, total_tokens: 10 + completion };
}

export class MockOpenAIServer extends MockUpstreamServer<MockOpenAIReply> {
  /** `http://127.0.0.1:<port>/v1`: the `baseUrl` of an openai-compatible provider. */
  get baseUrl(): string {
    return `${this.url}/v1`;
  }

  protected defaultBehaviour(request: RecordedRequest): MockBehaviour<MockOpenAIReply> {
    if (request.path.startsWith('/v1/chat/completions')) return { type: 'reply', reply: { text: `Mock: ${lastUserText(request.body)}` } };
    return {
      type: 'error',
      status: 404,
      message: `No mock behaviour for ${request.method} ${request.path}.`,
      errorType: 'invalid_request_error',
    };
  }

  protected errorBody(status: number, message: string, errorType: string | undefined): unknown {
    const type = errorType ?? (status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error');
    return { error: { message, type, param: null, code: null } };
  }

  protected replyEvents(reply: MockOpenAIReply, request: RecordedRequest): MockSseEvent[] {
    const id = reply.id ?? 'chatcmpl-mock0000000000000000000000000';
    const model = reply.model ?? String((request.body as { model?: unknown }).model ?? 'mock-model');
    const base = { id, object: 'chat.completion.chunk', created: 1_770_000_000, model };
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): MockSseEvent => ({
      data: { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], usage: null },
    });
    const events: MockSseEvent[] = [chunk({ role: 'assistant', content: '' })];
    for (const piece of wordPieces(reply.reasoning ?? '')) events.push(chunk({ reasoning_content: piece }));
    for (const piece of wordPieces(reply.text ?? '')) events.push(chunk({ content: piece }));
    (reply.toolCalls ?? []).forEach((call, index) => {
      events.push(
        chunk({
          tool_calls: [{ index, id: call.id ?? `call_mock${index}`, type: 'function', function: { name: call.name, arguments: '' } }],
        }),
      );
      for (const piece of thirds(argumentText(call))) events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    events.push(chunk({}, reply.finishReason ?? ((reply.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop')));
    const includeUsage = (request.body as { stream_options?: { include_usage?: unknown } }).stream_options?.include_usage === true;
    if (includeUsage && reply.usage !== null) events.push({ data: { ...base, choices: [], usage: reply.usage ?? defaultUsage(reply) } });
    events.push({ data: '[DONE]' });
    return events;
  }

  protected replyBody(reply: MockOpenAIReply, request: RecordedRequest): unknown {
    const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `call_mock${index}`,
      type: 'function',
      function: { name: call.name, arguments: argumentText(call) },
    }));
    return {
      id: reply.id ?? 'chatcmpl-mock0000000000000000000000000',
      object: 'chat.completion',
      created: 1_770_000_000,
      model: reply.model ?? String((request.body as { model?: unknown }).model ?? 'mock-model'),
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: reply.text ?? (toolCalls.length > 0 ? null : ''),
            refusal: null,
            ...(reply.reasoning === undefined ? {} : { reasoning_content: reply.reasoning }),
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          logprobs: null,
          finish_reason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
        },
      ],
      ...(reply.usage === null ? {} : { usage: reply.usage ?? defaultUsage(reply) }),
    };
  }
}
