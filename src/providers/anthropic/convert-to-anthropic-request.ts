/**
 * Converts the canonical GenerationRequest into an Anthropic Messages API request body
 * (https://docs.anthropic.com/en/api/messages). Always streaming.
 *
 * - System text goes in `system`. Tool results (canonical `tool` turns) become `tool_result` blocks of
 *   a user turn; consecutive turns of one role are merged, as the API wants alternating roles.
 * - `max_tokens` is required: the request's cap, else the model's configured default. When thinking
 *   is on with a defaulted cap, the cap is raised above the budget (the API wants budget < max_tokens).
 * - `reasoningEffort` without a budget becomes a thinking budget (low 1024, medium 4096, high 16384
 *   tokens), only when the cap leaves room for at least the API's minimum budget of 1024.
 * - A JSON-schema output format is passed through natively as `output_config.format` (the Messages
 *   API's structured outputs); the answer is then ordinary text and tools may be combined with it.
 *   `json_object` (no schema) has no such switch: the request gets a forced tool named `json` that takes
 *   any object, and the language model turns that tool's input back into text. Combined with the
 *   caller's own tools this is impossible: 400.
 * - Reasoning from earlier turns is sent back only with its signature (the API rejects unsigned
 *   thinking blocks, e.g. reasoning produced by another backend); redacted thinking is sent verbatim.
 * - `metadata` carries only `user_id` (the API's one metadata field), from `request.user`.
 * - With thinking on, temperature (other than 1), top_k and top_p below 0.95 are left out: the API
 *   refuses them together with thinking. They are reported as warnings (a response header and a log line).
 */
import type {
  AssistantContentPart,
  DocumentPart,
  GenerationRequest,
  GenerationSetting,
  GenerationWarning,
  ImagePart,
  ToolResultPart,
  UserContentPart,
} from '../../core/generation.ts';
import { invalidMessages, invalidParameter } from '../../core/service-error.ts';
import { parseDataUrl } from '../shared/data-url.ts';
import type {
  AnthropicContentBlock,
  AnthropicDocumentSource,
  AnthropicImageBlock,
  AnthropicImageSource,
  AnthropicMessage,
  AnthropicMessagesRequest,
  AnthropicTextBlock,
  AnthropicToolChoice,
} from './anthropic-wire.ts';

export interface AnthropicRequestOptions {
  upstreamModel: string;
  /** `max_tokens` when the request sets none, tokens (the model's configured maxOutputTokens). */
  defaultMaxOutputTokens: number;
}

export interface ConvertedAnthropicRequest {
  body: AnthropicMessagesRequest;
  /** Name of the tool that carries JSON output, when JSON output was asked for. */
  jsonToolName: string | undefined;
  /** Request settings left out: the API has no such setting, or refuses it together with thinking. */
  warnings: GenerationWarning[];
}

/** With thinking on, the API takes no temperature or top_k, and top_p only from 0.95 up. */
const MIN_TOP_P_WITH_THINKING = 0.95;

export const JSON_TOOL_NAME = 'json';
/** The Messages API's smallest thinking budget, tokens. */
const MIN_THINKING_BUDGET = 1024;
const BUDGET_BY_EFFORT = { low: 1024, medium: 4096, high: 16_384 } as const;

function imageSource(url: string, mediaType: string | undefined): AnthropicImageSource {
  const data = parseDataUrl(url);
  if (data !== undefined && data.base64) return { type: 'base64', media_type: mediaType ?? data.mediaType, data: data.data };
  if (data !== undefined)
    return { type: 'base64', media_type: mediaType ?? data.mediaType, data: Buffer.from(data.data, 'utf8').toString('base64') };
  return { type: 'url', url };
}

function convertImage(part: ImagePart): AnthropicImageBlock {
  return { type: 'image', source: imageSource(part.url, part.mediaType) };
}

function documentSource(part: DocumentPart, param: string): AnthropicDocumentSource {
  if (part.text !== undefined) return { type: 'text', media_type: 'text/plain', data: part.text };
  if (part.url === undefined) throw invalidParameter(param, 'A document needs either a URL, inline data or text.');
  const data = parseDataUrl(part.url);
  if (data === undefined) return { type: 'url', url: part.url };
  const mediaType = part.mediaType ?? data.mediaType;
  // The API takes base64 documents only as PDF; plain text goes as a text source.
  if (mediaType.startsWith('text/')) {
    return { type: 'text', media_type: 'text/plain', data: data.base64 ? Buffer.from(data.data, 'base64').toString('utf8') : data.data };
  }
  return { type: 'base64', media_type: mediaType, data: data.base64 ? data.data : Buffer.from(data.data, 'utf8').toString('base64') };
}

function convertUserPart(part: UserContentPart, param: string): AnthropicContentBlock | undefined {
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : { type: 'text', text: part.text };
    case 'image':
      return convertImage(part);
    case 'document':
      return { type: 'document', source: documentSource(part, param), ...(part.title === undefined ? {} : { title: part.title }) };
  }
}

function parseToolInput(input: string, param: string): Record<string, unknown> {
  if (input.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    throw invalidMessages(param, 'The arguments of a tool call must be a JSON object.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidMessages(param, 'The arguments of a tool call must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

function convertAssistantPart(part: AssistantContentPart, param: string): AnthropicContentBlock | undefined {
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : { type: 'text', text: part.text };
    case 'reasoning':
      if (part.redactedData !== undefined) return { type: 'redacted_thinking', data: part.redactedData };
      return part.signature === undefined ? undefined : { type: 'thinking', thinking: part.text, signature: part.signature };
    case 'tool-call':
      return { type: 'tool_use', id: part.id, name: part.name, input: parseToolInput(part.input, `${param}.input`) };
  }
}

function convertToolResult(part: ToolResultPart): AnthropicContentBlock {
  const content: string | Array<AnthropicTextBlock | AnthropicImageBlock> =
    typeof part.content === 'string'
      ? part.content
      : part.content.map((inner) => (inner.type === 'text' ? { type: 'text', text: inner.text } : convertImage(inner)));
  return { type: 'tool_result', tool_use_id: part.toolCallId, content, ...(part.isError === true ? { is_error: true } : {}) };
}

function convertMessages(request: GenerationRequest): AnthropicMessage[] {
  const messages: AnthropicMessage[] = [];
  const append = (role: 'user' | 'assistant', blocks: AnthropicContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  request.messages.forEach((message, index) => {
    const param = `messages[${index}].content`;
    const blocks: AnthropicContentBlock[] = [];
    switch (message.role) {
      case 'user':
        message.content.forEach((part, partIndex) => {
          const block = convertUserPart(part, `${param}[${partIndex}]`);
          if (block !== undefined) blocks.push(block);
        });
        append('user', blocks);
        break;
      case 'assistant':
        message.content.forEach((part, partIndex) => {
          const block = convertAssistantPart(part, `${param}[${partIndex}]`);
          if (block !== undefined) blocks.push(block);
        });
        append('assistant', blocks);
        break;
      case 'tool':
        append('user', message.content.map(convertToolResult));
        break;
    }
  });
  return messages;
}

function convertToolChoice(request: GenerationRequest): AnthropicToolChoice | undefined {
  const choice = request.toolChoice;
  const disableParallel = request.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  switch (choice?.type) {
    case undefined:
      return request.parallelToolCalls === false && (request.tools ?? []).length > 0
        ? { type: 'auto', disable_parallel_tool_use: true }
        : undefined;
    case 'auto':
      return { type: 'auto', ...disableParallel };
    case 'required':
      return { type: 'any', ...disableParallel };
    case 'tool':
      return { type: 'tool', name: choice.name, ...disableParallel };
    case 'none':
      return { type: 'none' };
  }
}

export function convertToAnthropicRequest(request: GenerationRequest, options: AnthropicRequestOptions): ConvertedAnthropicRequest {
  const maxTokensGiven = request.maxOutputTokens !== undefined;
  let maxTokens = request.maxOutputTokens ?? options.defaultMaxOutputTokens;
  const body: AnthropicMessagesRequest = {
    model: options.upstreamModel,
    max_tokens: maxTokens,
    messages: convertMessages(request),
    stream: true,
  };
  if (request.system !== undefined && request.system !== '') body.system = request.system;

  const tools = request.tools ?? [];
  if (tools.length > 0) {
    body.tools = tools.map((tool) => ({
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      input_schema: tool.inputSchema,
    }));
  }
  const toolChoice = convertToolChoice(request);
  if (toolChoice !== undefined) body.tool_choice = toolChoice;

  let budget = request.thinking?.budgetTokens;
  if (budget === undefined && request.reasoningEffort !== undefined) {
    const wanted = BUDGET_BY_EFFORT[request.reasoningEffort];
    const room = maxTokensGiven ? Math.min(wanted, maxTokens - 1) : wanted;
    if (room >= MIN_THINKING_BUDGET) budget = room;
  }
  if (budget !== undefined) {
    if (!maxTokensGiven && maxTokens <= budget) maxTokens = budget + options.defaultMaxOutputTokens;
    body.max_tokens = maxTokens;
    body.thinking = { type: 'enabled', budget_tokens: budget };
  }

  let jsonToolName: string | undefined;
  const format = request.responseFormat;
  if (format !== undefined && format.type === 'json_schema') {
    body.output_config = { format: { type: 'json_schema', schema: format.schema } };
  } else if (format !== undefined && format.type === 'json_object') {
    if (tools.length > 0) {
      throw invalidParameter(
        'response_format',
        "This model's backend cannot combine JSON output (response_format) with tools. Drop one of them.",
      );
    }
    jsonToolName = JSON_TOOL_NAME;
    body.tools = [
      { name: JSON_TOOL_NAME, description: 'Respond with a JSON document.', input_schema: { type: 'object', additionalProperties: true } },
    ];
    // The API refuses forced tool use while thinking; then the model is only offered the tool.
    body.tool_choice = body.thinking === undefined ? { type: 'tool', name: JSON_TOOL_NAME } : { type: 'auto' };
  }

  if (request.stopSequences !== undefined && request.stopSequences.length > 0) body.stop_sequences = request.stopSequences;
  // Thinking fixes the sampling: settings the API would refuse with it are left out and reported, so a
  // default temperature (the responses endpoint sends 0.7) does not turn a thinking request into a 400.
  const warnings: GenerationWarning[] = [];
  const thinking = body.thinking !== undefined;
  const refused = (setting: GenerationSetting): void => void warnings.push({ setting, reason: 'refused-with-thinking' });
  if (request.temperature !== undefined) {
    if (thinking && request.temperature !== 1) refused('temperature');
    // The Messages API takes 0-1; a compatible-mode request may carry up to 2.
    else body.temperature = Math.min(request.temperature, 1);
  }
  if (request.topP !== undefined) {
    if (thinking && request.topP < MIN_TOP_P_WITH_THINKING) refused('topP');
    else body.top_p = request.topP;
  }
  if (request.topK !== undefined) {
    if (thinking) refused('topK');
    else body.top_k = request.topK;
  }
  // The Messages API has no sampling seed.
  if (request.seed !== undefined) warnings.push({ setting: 'seed', reason: 'unsupported' });
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  return { body, jsonToolName, warnings };
}
