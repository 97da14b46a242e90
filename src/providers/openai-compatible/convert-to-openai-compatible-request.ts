/**
 * Converts the canonical GenerationRequest into an OpenAI Chat Completions request body
 * (https://platform.openai.com/docs/api-reference/chat/create). Always streaming, with usage.
 *
 * What the Chat Completions API cannot carry:
 * - reasoning from earlier assistant turns: the API has no field for it, so it is not sent (the model
 *   reasons afresh; nothing is lost for the caller);
 * - documents by http(s) URL and images inside tool results: a 400 naming the part;
 * - `metadata` (OpenAI stores it only with `store: true`, which a gateway must not switch on): not sent;
 * - `top_k` is an extension of vLLM, llama.cpp and LM Studio: sent everywhere except to OpenAI itself,
 *   where it is reported as a warning (`unsupportedSettings`).
 * A thinking budget without an effort becomes `reasoning_effort` (the only knob the API has).
 */
import type {
  AssistantContentPart,
  GenerationRequest,
  GenerationWarning,
  Message,
  ToolChoice,
  ToolResultPart,
  UserContentPart,
} from '../../core/generation.ts';
import { invalidParameter } from '../../core/service-error.ts';
import type { OpenAIChatRequest, OpenAIContentPart, OpenAIMessage, OpenAIToolCall, OpenAIToolChoice } from './openai-compatible-wire.ts';

export interface OpenAICompatibleRequestOptions {
  /** Model name sent upstream. */
  upstreamModel: string;
  /** Which field carries the completion cap: OpenAI itself wants `max_completion_tokens`. */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Whether the upstream accepts the `top_k` extension. */
  acceptsTopK: boolean;
}

/** Thinking budgets (tokens) at or above which an effort level is chosen. */
const MEDIUM_EFFORT_BUDGET = 4096;
const HIGH_EFFORT_BUDGET = 16_384;

/** Request settings this upstream does not honour: `top_k` where the upstream has no such extension. */
export function unsupportedSettings(
  request: GenerationRequest,
  options: Pick<OpenAICompatibleRequestOptions, 'acceptsTopK'>,
): GenerationWarning[] {
  return request.topK !== undefined && !options.acceptsTopK ? [{ setting: 'topK', reason: 'unsupported' }] : [];
}

export function effortForBudget(budgetTokens: number): 'low' | 'medium' | 'high' {
  if (budgetTokens >= HIGH_EFFORT_BUDGET) return 'high';
  return budgetTokens >= MEDIUM_EFFORT_BUDGET ? 'medium' : 'low';
}

function convertUserPart(part: UserContentPart, param: string): OpenAIContentPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image_url', image_url: part.detail === undefined ? { url: part.url } : { url: part.url, detail: part.detail } };
    case 'document': {
      if (part.text !== undefined) {
        return { type: 'text', text: part.title === undefined ? part.text : `${part.title}\n\n${part.text}` };
      }
      if (part.url?.startsWith('data:')) {
        return { type: 'file', file: { filename: part.title ?? 'document', file_data: part.url } };
      }
      throw invalidParameter(
        param,
        "This model's backend cannot fetch documents by URL. Send the document inline (base64 data or text) instead.",
      );
    }
  }
}

function convertUserContent(content: UserContentPart[], param: string): string | OpenAIContentPart[] {
  const only = content[0];
  if (content.length === 1 && only?.type === 'text') return only.text;
  return content.map((part, index) => convertUserPart(part, `${param}[${index}]`));
}

function convertAssistant(content: AssistantContentPart[]): OpenAIMessage {
  let text = '';
  const toolCalls: OpenAIToolCall[] = [];
  for (const part of content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'tool-call') {
      toolCalls.push({
        id: part.id,
        type: 'function',
        function: { name: part.name, arguments: part.input.trim() === '' ? '{}' : part.input },
      });
    }
    // Reasoning parts: the Chat Completions API has no field for earlier reasoning (see the header).
  }
  const message: OpenAIMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

function convertToolResult(part: ToolResultPart, param: string): OpenAIMessage {
  let content: string;
  if (typeof part.content === 'string') content = part.content;
  else {
    content = part.content
      .map((inner, index) => {
        if (inner.type === 'image') {
          throw invalidParameter(
            `${param}[${index}]`,
            "This model's backend cannot take images inside tool results. Send the image in a user message.",
          );
        }
        return inner.text;
      })
      .join('');
  }
  return { role: 'tool', tool_call_id: part.toolCallId, content };
}

function convertMessages(request: GenerationRequest): OpenAIMessage[] {
  const messages: OpenAIMessage[] = [];
  if (request.system !== undefined && request.system !== '') messages.push({ role: 'system', content: request.system });
  request.messages.forEach((message: Message, index) => {
    const param = `messages[${index}].content`;
    switch (message.role) {
      case 'user':
        messages.push({ role: 'user', content: convertUserContent(message.content, param) });
        break;
      case 'assistant':
        messages.push(convertAssistant(message.content));
        break;
      case 'tool':
        message.content.forEach((part, partIndex) => messages.push(convertToolResult(part, `${param}[${partIndex}].content`)));
        break;
    }
  });
  return messages;
}

function convertToolChoice(choice: ToolChoice): OpenAIToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'none':
      return 'none';
    case 'required':
      return 'required';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}

export function convertToOpenAICompatibleRequest(
  request: GenerationRequest,
  options: OpenAICompatibleRequestOptions,
  stream = true,
): OpenAIChatRequest {
  const body: OpenAIChatRequest = stream
    ? { model: options.upstreamModel, messages: convertMessages(request), stream: true, stream_options: { include_usage: true } }
    : { model: options.upstreamModel, messages: convertMessages(request), stream: false };
  const tools = request.tools ?? [];
  if (tools.length > 0) {
    body.tools = tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.inputSchema,
        ...(tool.strict === undefined ? {} : { strict: tool.strict }),
      },
    }));
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  if (request.toolChoice !== undefined) body.tool_choice = convertToolChoice(request.toolChoice);
  const format = request.responseFormat;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema') {
    body.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.strict === undefined ? {} : { strict: format.strict }),
        ...(format.description === undefined ? {} : { description: format.description }),
      },
    };
  }
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) body.stop = request.stopSequences;
  if (request.maxOutputTokens !== undefined) body[options.maxTokensField] = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined && options.acceptsTopK) body.top_k = request.topK;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.user !== undefined) body.user = request.user;
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort;
  else if (request.thinking !== undefined) body.reasoning_effort = effortForBudget(request.thinking.budgetTokens);
  return body;
}
