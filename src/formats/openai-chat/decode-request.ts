/**
 * Decodes an OpenAI `POST /v1/chat/completions` body into the canonical GenerationRequest.
 *
 * Wire document: OpenAI OpenAPI `CreateChatCompletionRequest` and `ChatCompletionRequestMessage`
 * (docs/wire-contracts.md "Chat completions"), with the docs/spec.md rules winning where they differ: temperature
 * and top_p 0.0-1.0, max_tokens >= 1, and the SPEC error codes. Strict on the way in (docs/design.md
 * convention 4): every refusal is a 400 ServiceError whose `param` is the dotted path of the field.
 *
 * Code choice, the same for every field: a value of the wrong JSON type is `invalid_format`; a value of
 * the right type that is not allowed (range, enum, unsupported feature) is `invalid_parameter`; an absent
 * required field is `missing_parameter`; a malformed conversation (role, content block kind, tool
 * message order) is `invalid_messages`. `null` counts as absent for optional fields (the SDK types make
 * most fields nullable). Fields this decoder does not know are ignored, because SDKs add new ones.
 */
import type {
  AssistantContentPart,
  DocumentPart,
  GenerationRequest,
  ImagePart,
  Message,
  ResponseFormat,
  TextPart,
  ToolChoice,
  ToolDefinition,
  ToolResultPart,
  UserContentPart,
} from '../../core/generation.ts';
import { invalidFormat, invalidMessages, invalidParameter, missingParameter } from '../../core/service-error.ts';
import {
  isObject,
  describeType,
  wrongType,
  expectObject,
  requiredString,
  optionalString,
  optionalBoolean,
  optionalNumberInRange,
  optionalInteger,
  optionalPositiveInteger,
  optionalEnum,
  parseDataUrl,
  isHttpUrl,
  type JsonObject,
  optionalMetadata,
} from '../shared/request-fields.ts';
import { maxTemperature, SPEC_DECODE_OPTIONS, type DecodeOptions } from '../shared/decode-options.ts';

/** What the chat encoders need besides the canonical request. */
export interface ChatCompletionOptions {
  /** The `model` string exactly as the client sent it (echoed by default in responses and chunks). */
  model: string;
  /** `stream: true`: answer with server-sent chunks. */
  stream: boolean;
  /** `stream_options.include_usage: true`: one extra chunk with `choices: []` and `usage` before `[DONE]`. */
  includeUsage: boolean;
  /**
   * Wire names of parameters that were valid but will not be honoured (for example a non-zero
   * `frequency_penalty`), for a warning header and log line. Empty when everything is honoured.
   */
  ignoredParameters: string[];
  /**
   * Wire path of the first image (`messages[1].content[0].image_url`), to name as `param` when the model
   * lacks `vision` (canonical message indices differ: system messages are hoisted, tool messages merged).
   * Undefined when the request has no image.
   */
  imageParam?: string;
}

export interface DecodedChatCompletionRequest {
  request: GenerationRequest;
  options: ChatCompletionOptions;
}

/** OpenAI function and json_schema names: `^[a-zA-Z0-9_-]{1,64}$`. */
const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
/** OpenAI's chat `stop` limit. */
const MAX_STOP_SEQUENCES = 4;
/** OpenAI (and SPEC response-style) metadata limits. */
const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;
const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

/**
 * Decodes and validates a chat completions request body (already JSON-parsed).
 * Throws a 400 ServiceError with a precise `param` for any client mistake.
 */
export function decodeChatCompletionRequest(
  body: unknown,
  decodeOptions: DecodeOptions = SPEC_DECODE_OPTIONS,
): DecodedChatCompletionRequest {
  if (!isObject(body)) throw invalidFormat(null, `The request body must be a JSON object, but got ${describeType(body)} instead.`);

  const model = requiredString(body, 'model', 'model');
  if (model.length === 0) throw invalidParameter('model', "Invalid 'model': the model id must not be empty.");

  const { system, messages, imageParam } = decodeMessages(body['messages']);
  const request: GenerationRequest = { model, messages };
  if (system !== undefined) request.system = system;
  const ignoredParameters: string[] = [];

  // SPEC: 0.0-1.0; `compatible` validation takes OpenAI's 0.0-2.0.
  const temperature = optionalNumberInRange(body, 'temperature', 0, maxTemperature(decodeOptions));
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optionalNumberInRange(body, 'top_p', 0, 1);
  if (topP !== undefined) request.topP = topP;

  const maxCompletionTokens = optionalPositiveInteger(body, 'max_completion_tokens');
  const maxTokens = optionalPositiveInteger(body, 'max_tokens');
  if (maxCompletionTokens !== undefined && maxTokens !== undefined && maxCompletionTokens !== maxTokens) {
    throw invalidParameter(
      'max_tokens',
      "Invalid 'max_tokens': it differs from 'max_completion_tokens'. Send only one of them ('max_tokens' is the deprecated spelling).",
    );
  }
  const maxOutputTokens = maxCompletionTokens ?? maxTokens;
  if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens;

  const choiceCount = optionalInteger(body, 'n');
  if (choiceCount !== undefined && choiceCount !== 1) {
    throw invalidParameter(
      'n',
      choiceCount < 1
        ? `Invalid 'n': ${choiceCount} is less than the minimum of 1.`
        : `Invalid 'n': this service generates one choice per request, so 'n' must be 1 (got ${choiceCount}). Send ${choiceCount} separate requests instead.`,
    );
  }

  const stopSequences = decodeStop(body['stop']);
  if (stopSequences !== undefined) request.stopSequences = stopSequences;

  const stream = optionalBoolean(body, 'stream') ?? false;
  const includeUsage = decodeStreamOptions(body['stream_options'], stream);

  const tools = decodeTools(body['tools']);
  if (tools !== undefined) request.tools = tools;
  const toolChoice = decodeToolChoice(body['tool_choice'], tools);
  if (toolChoice !== undefined) request.toolChoice = toolChoice;
  const parallelToolCalls = optionalBoolean(body, 'parallel_tool_calls');
  if (parallelToolCalls !== undefined) request.parallelToolCalls = parallelToolCalls;

  const responseFormat = decodeResponseFormat(body['response_format']);
  if (responseFormat !== undefined) request.responseFormat = responseFormat;

  const seed = optionalInteger(body, 'seed');
  if (seed !== undefined) request.seed = seed;
  const user = optionalString(body, 'user');
  if (user !== undefined) request.user = user;
  const metadata = optionalMetadata(body['metadata']);
  if (metadata !== undefined) request.metadata = metadata;

  const reasoningEffort = optionalEnum(body, 'reasoning_effort', REASONING_EFFORTS);
  // The canonical request knows low/medium/high; the finer OpenAI levels map to the nearest of them,
  // and `none` means "do not ask for reasoning", which is the canonical default.
  if (reasoningEffort === 'minimal' || reasoningEffort === 'low') request.reasoningEffort = 'low';
  else if (reasoningEffort === 'medium') request.reasoningEffort = 'medium';
  else if (reasoningEffort === 'high' || reasoningEffort === 'xhigh' || reasoningEffort === 'max') request.reasoningEffort = 'high';

  decodeUnsupportedFeatures(body, ignoredParameters);

  const options: ChatCompletionOptions = { model, stream, includeUsage, ignoredParameters };
  if (imageParam !== undefined) options.imageParam = imageParam;
  return { request, options };
}

// ---------------------------------------------------------------------------------------------------
// Messages

interface DecodedMessages {
  system?: string;
  messages: Message[];
  imageParam?: string;
}

/** Tool calls of the latest assistant message that still wait for their `tool` answers. */
interface ToolCallLedger {
  /** Every call id made by an earlier assistant message -> tool name. */
  known: Map<string, string>;
  /** Calls of the latest assistant message not answered yet, and the index of that message. */
  pending: Set<string>;
  pendingFrom: number;
}

function decodeMessages(value: unknown): DecodedMessages {
  if (value === undefined || value === null) throw missingParameter('messages');
  if (!Array.isArray(value)) throw wrongType('messages', 'an array of messages', value);
  if (value.length === 0) throw invalidMessages('messages', "Invalid 'messages': the conversation must contain at least one message.");

  const systemTexts: string[] = [];
  const messages: Message[] = [];
  const ledger: ToolCallLedger = { known: new Map(), pending: new Set(), pendingFrom: -1 };

  for (let index = 0; index < value.length; index++) {
    const param = `messages[${index}]`;
    const message: unknown = value[index];
    if (!isObject(message)) throw wrongType(param, 'an object', message);
    const roleValue = message['role'];
    if (roleValue === undefined || roleValue === null) throw missingParameter(`${param}.role`);
    if (typeof roleValue !== 'string') throw wrongType(`${param}.role`, 'a string', roleValue);
    if (!(MESSAGE_ROLES as readonly string[]).includes(roleValue)) {
      throw invalidMessages(
        `${param}.role`,
        roleValue === 'function'
          ? `Invalid '${param}.role': the deprecated 'function' role is not supported; send tool results with role 'tool' and 'tool_call_id'.`
          : `Invalid '${param}.role': '${roleValue}' is not one of 'system', 'developer', 'user', 'assistant', 'tool'.`,
      );
    }
    const role = roleValue as (typeof MESSAGE_ROLES)[number];

    if (role !== 'tool' && role !== 'system' && role !== 'developer') requireToolCallsAnswered(ledger, param);

    switch (role) {
      case 'system':
      case 'developer':
        systemTexts.push(decodeTextOnlyContent(message, param));
        break;
      case 'user':
        messages.push({ role: 'user', content: decodeUserContent(message, param) });
        break;
      case 'assistant':
        messages.push({ role: 'assistant', content: decodeAssistantMessage(message, param, ledger, index) });
        break;
      case 'tool': {
        const result = decodeToolMessage(message, param, ledger);
        const previous = messages[messages.length - 1];
        // Consecutive tool messages answer one assistant turn: the canonical form is one tool turn.
        if (previous?.role === 'tool') previous.content.push(result);
        else messages.push({ role: 'tool', content: [result] });
        break;
      }
    }
  }
  requireToolCallsAnswered(ledger, `messages[${value.length - 1}]`);

  if (messages.length === 0) {
    throw invalidMessages(
      'messages',
      "Invalid 'messages': the conversation must contain at least one user or assistant message besides system messages.",
    );
  }
  const decoded: DecodedMessages = { messages };
  // System and developer messages are hoisted, wherever they stand, into the one canonical system text.
  if (systemTexts.length > 0) decoded.system = systemTexts.join('\n\n');
  const imageParam = findFirstImageParam(value);
  if (imageParam !== undefined) decoded.imageParam = imageParam;
  return decoded;
}

/** Wire path of the first `image_url` part of an already validated message list. */
function findFirstImageParam(messages: unknown[]): string | undefined {
  for (const [messageIndex, message] of messages.entries()) {
    const content = (message as JsonObject)['content'];
    if ((message as JsonObject)['role'] !== 'user' || !Array.isArray(content)) continue;
    const partIndex = content.findIndex((part) => (part as JsonObject)['type'] === 'image_url');
    if (partIndex >= 0) return `messages[${messageIndex}].content[${partIndex}].image_url`;
  }
  return undefined;
}

function requireToolCallsAnswered(ledger: ToolCallLedger, param: string): void {
  if (ledger.pending.size === 0) return;
  const missing = [...ledger.pending].map((id) => `'${id}'`).join(', ');
  throw invalidMessages(
    param,
    `Invalid '${param}': the assistant message at 'messages[${ledger.pendingFrom}]' has tool_calls that must each be answered by a 'tool' message before the conversation goes on; missing answers for tool_call_id ${missing}.`,
  );
}

/** system / developer content: a string or an array of text parts, joined with newlines. */
function decodeTextOnlyContent(message: JsonObject, param: string): string {
  const content = message['content'];
  if (content === undefined || content === null) throw missingParameter(`${param}.content`);
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw wrongType(`${param}.content`, 'a string or an array of text parts', content);
  return decodeTextParts(content, `${param}.content`)
    .map((part) => part.text)
    .join('\n');
}

function decodeTextParts(parts: unknown[], param: string): TextPart[] {
  return parts.map((part, index) => {
    const partParam = `${param}[${index}]`;
    const object = expectObject(part, partParam);
    const type = requiredString(object, 'type', `${partParam}.type`);
    if (type !== 'text') {
      throw invalidMessages(`${partParam}.type`, `Invalid '${partParam}.type': only 'text' parts are allowed here, got '${type}'.`);
    }
    return { type: 'text', text: requiredString(object, 'text', `${partParam}.text`) };
  });
}

function decodeUserContent(message: JsonObject, param: string): UserContentPart[] {
  const content = message['content'];
  if (content === undefined || content === null) throw missingParameter(`${param}.content`);
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw wrongType(`${param}.content`, 'a string or an array of content parts', content);
  if (content.length === 0)
    throw invalidMessages(`${param}.content`, `Invalid '${param}.content': an array of content parts must not be empty.`);
  return content.map((part, index) => decodeUserPart(part, `${param}.content[${index}]`));
}

function decodeUserPart(value: unknown, param: string): UserContentPart {
  const part = expectObject(value, param);
  const type = requiredString(part, 'type', `${param}.type`);
  switch (type) {
    case 'text':
      return { type: 'text', text: requiredString(part, 'text', `${param}.text`) };
    case 'image_url':
      return decodeImagePart(part, param);
    case 'file':
      return decodeFilePart(part, param);
    case 'input_audio':
      throw invalidParameter(`${param}.type`, `Invalid '${param}.type': audio input ('input_audio') is not supported by this service.`);
    default:
      throw invalidMessages(`${param}.type`, `Invalid '${param}.type': '${type}' is not one of 'text', 'image_url', 'file'.`);
  }
}

function decodeImagePart(part: JsonObject, param: string): ImagePart {
  const imageUrl = part['image_url'];
  if (imageUrl === undefined || imageUrl === null) throw missingParameter(`${param}.image_url`);
  const image = expectObject(imageUrl, `${param}.image_url`);
  const url = requiredString(image, 'url', `${param}.image_url.url`);
  const result: ImagePart = { type: 'image', url };
  const dataUrl = parseDataUrl(url);
  if (dataUrl !== undefined) {
    if (!dataUrl.mediaType.startsWith('image/')) {
      throw invalidParameter(
        `${param}.image_url.url`,
        `Invalid '${param}.image_url.url': a data URL must carry an image media type (image/png, image/jpeg, ...), got '${dataUrl.mediaType}'.`,
      );
    }
    result.mediaType = dataUrl.mediaType;
  } else if (!isHttpUrl(url)) {
    throw invalidParameter(
      `${param}.image_url.url`,
      `Invalid '${param}.image_url.url': expected an http(s) URL or a base64 'data:image/...;base64,' URL.`,
    );
  }
  const detail = optionalEnum(image, 'detail', ['auto', 'low', 'high'] as const, `${param}.image_url.detail`);
  if (detail !== undefined) result.detail = detail;
  return result;
}

/** OpenAI `file` parts carry inline data as a data URL (`file_data`); stored file ids are not resolvable here. */
function decodeFilePart(part: JsonObject, param: string): DocumentPart {
  const fileValue = part['file'];
  if (fileValue === undefined || fileValue === null) throw missingParameter(`${param}.file`);
  const file = expectObject(fileValue, `${param}.file`);
  const fileData = optionalString(file, 'file_data', `${param}.file.file_data`);
  if (fileData === undefined) {
    if (file['file_id'] !== undefined && file['file_id'] !== null) {
      throw invalidParameter(
        `${param}.file.file_id`,
        `Invalid '${param}.file.file_id': file references are not supported in messages; send the document inline as 'file_data' (a base64 data URL).`,
      );
    }
    throw missingParameter(`${param}.file.file_data`);
  }
  const dataUrl = parseDataUrl(fileData);
  if (dataUrl === undefined) {
    throw invalidParameter(
      `${param}.file.file_data`,
      `Invalid '${param}.file.file_data': expected a base64 data URL such as 'data:application/pdf;base64,...'.`,
    );
  }
  const document: DocumentPart = { type: 'document', url: fileData, mediaType: dataUrl.mediaType };
  const filename = optionalString(file, 'filename', `${param}.file.filename`);
  if (filename !== undefined) document.title = filename;
  return document;
}

function decodeAssistantMessage(message: JsonObject, param: string, ledger: ToolCallLedger, messageIndex: number): AssistantContentPart[] {
  const parts: AssistantContentPart[] = [];
  // Reasoning some OpenAI-compatible servers return (`reasoning_content`) and clients send back.
  const reasoning = optionalString(message, 'reasoning_content', `${param}.reasoning_content`);
  if (reasoning !== undefined && reasoning.length > 0) parts.push({ type: 'reasoning', text: reasoning });

  const content = message['content'];
  if (typeof content === 'string') {
    if (content.length > 0) parts.push({ type: 'text', text: content });
  } else if (Array.isArray(content)) {
    content.forEach((value, index) => {
      const partParam = `${param}.content[${index}]`;
      const part = expectObject(value, partParam);
      const type = requiredString(part, 'type', `${partParam}.type`);
      if (type === 'text') parts.push({ type: 'text', text: requiredString(part, 'text', `${partParam}.text`) });
      else if (type === 'refusal') parts.push({ type: 'text', text: requiredString(part, 'refusal', `${partParam}.refusal`) });
      else
        throw invalidMessages(
          `${partParam}.type`,
          `Invalid '${partParam}.type': assistant content parts are 'text' or 'refusal', got '${type}'.`,
        );
    });
  } else if (content !== undefined && content !== null) {
    throw wrongType(`${param}.content`, 'a string, an array of content parts or null', content);
  }
  const hasText = parts.some((part) => part.type === 'text');
  if (!hasText) {
    // A refusal the model gave earlier is what the assistant said in that turn.
    const refusal = optionalString(message, 'refusal', `${param}.refusal`);
    if (refusal !== undefined && refusal.length > 0) parts.push({ type: 'text', text: refusal });
  }

  const toolCallsValue = message['tool_calls'];
  let toolCallCount = 0;
  if (toolCallsValue !== undefined && toolCallsValue !== null) {
    if (!Array.isArray(toolCallsValue)) throw wrongType(`${param}.tool_calls`, 'an array of tool calls', toolCallsValue);
    ledger.pending = new Set();
    ledger.pendingFrom = messageIndex;
    toolCallsValue.forEach((value, index) => {
      const callParam = `${param}.tool_calls[${index}]`;
      const call = expectObject(value, callParam);
      const id = requiredString(call, 'id', `${callParam}.id`);
      if (id.length === 0) throw invalidParameter(`${callParam}.id`, `Invalid '${callParam}.id': the tool call id must not be empty.`);
      const type = requiredString(call, 'type', `${callParam}.type`);
      if (type !== 'function')
        throw invalidMessages(`${callParam}.type`, `Invalid '${callParam}.type': only 'function' tool calls are supported, got '${type}'.`);
      const functionValue = call['function'];
      if (functionValue === undefined || functionValue === null) throw missingParameter(`${callParam}.function`);
      const fn = expectObject(functionValue, `${callParam}.function`);
      const name = requiredString(fn, 'name', `${callParam}.function.name`);
      // Arguments are kept verbatim: models sometimes produce invalid JSON, and clients send it back as is.
      const input = requiredString(fn, 'arguments', `${callParam}.function.arguments`);
      if (ledger.pending.has(id))
        throw invalidMessages(`${callParam}.id`, `Invalid '${callParam}.id': the tool call id '${id}' appears twice in this message.`);
      ledger.known.set(id, name);
      ledger.pending.add(id);
      parts.push({ type: 'tool-call', id, name, input });
      toolCallCount++;
    });
  }

  if (parts.length === 0 && toolCallCount === 0 && !(typeof content === 'string' || Array.isArray(content))) {
    throw missingParameter(
      `${param}.content`,
      `Missing required parameter: '${param}.content' (an assistant message needs content or tool_calls).`,
    );
  }
  return parts;
}

function decodeToolMessage(message: JsonObject, param: string, ledger: ToolCallLedger): ToolResultPart {
  const toolCallId = requiredString(message, 'tool_call_id', `${param}.tool_call_id`);
  if (!ledger.pending.has(toolCallId)) {
    throw invalidMessages(
      `${param}.tool_call_id`,
      ledger.known.has(toolCallId)
        ? `Invalid '${param}.tool_call_id': '${toolCallId}' was already answered or does not belong to the assistant message just before; a 'tool' message must answer a tool call of the preceding assistant message.`
        : `Invalid '${param}.tool_call_id': '${toolCallId}' does not match any tool call of an earlier assistant message.`,
    );
  }
  ledger.pending.delete(toolCallId);

  const contentValue = message['content'];
  if (contentValue === undefined || contentValue === null) throw missingParameter(`${param}.content`);
  let content: ToolResultPart['content'];
  if (typeof contentValue === 'string') content = contentValue;
  else if (Array.isArray(contentValue)) content = decodeTextParts(contentValue, `${param}.content`);
  else throw wrongType(`${param}.content`, 'a string or an array of text parts', contentValue);

  const result: ToolResultPart = { type: 'tool-result', toolCallId, content };
  const toolName = ledger.known.get(toolCallId);
  if (toolName !== undefined) result.toolName = toolName;
  return result;
}

// ---------------------------------------------------------------------------------------------------
// Other parameters

function decodeStop(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    if (value.length === 0) throw invalidParameter('stop', "Invalid 'stop': a stop sequence must not be empty.");
    return [value];
  }
  if (!Array.isArray(value)) throw wrongType('stop', 'a string or an array of strings', value);
  if (value.length > MAX_STOP_SEQUENCES) {
    throw invalidParameter('stop', `Invalid 'stop': at most ${MAX_STOP_SEQUENCES} stop sequences are allowed, got ${value.length}.`);
  }
  const sequences = value.map((item, index) => {
    if (typeof item !== 'string') throw wrongType(`stop[${index}]`, 'a string', item);
    if (item.length === 0) throw invalidParameter(`stop[${index}]`, `Invalid 'stop[${index}]': a stop sequence must not be empty.`);
    return item;
  });
  return sequences.length > 0 ? sequences : undefined;
}

/** Returns `include_usage`. `stream_options` is only meaningful with `stream: true`, as OpenAI rules. */
function decodeStreamOptions(value: unknown, stream: boolean): boolean {
  if (value === undefined || value === null) return false;
  const options = expectObject(value, 'stream_options');
  if (!stream) throw invalidParameter('stream_options', "Invalid 'stream_options': it is only allowed when 'stream' is true.");
  return optionalBoolean(options, 'include_usage', 'stream_options.include_usage') ?? false;
}

function decodeTools(value: unknown): ToolDefinition[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw wrongType('tools', 'an array of tools', value);
  const names = new Set<string>();
  const tools = value.map((item, index): ToolDefinition => {
    const param = `tools[${index}]`;
    const tool = expectObject(item, param);
    const type = requiredString(tool, 'type', `${param}.type`);
    if (type !== 'function')
      throw invalidParameter(`${param}.type`, `Invalid '${param}.type': only 'function' tools are supported, got '${type}'.`);
    const functionValue = tool['function'];
    if (functionValue === undefined || functionValue === null) throw missingParameter(`${param}.function`);
    const fn = expectObject(functionValue, `${param}.function`);
    const name = requiredString(fn, 'name', `${param}.function.name`);
    if (!FUNCTION_NAME_PATTERN.test(name)) {
      throw invalidParameter(
        `${param}.function.name`,
        `Invalid '${param}.function.name': '${name}' must be 1 to 64 characters of a-z, A-Z, 0-9, '_' or '-'.`,
      );
    }
    if (names.has(name))
      throw invalidParameter(`${param}.function.name`, `Invalid '${param}.function.name': the tool name '${name}' is defined twice.`);
    names.add(name);
    const parameters = fn['parameters'];
    let inputSchema: Record<string, unknown>;
    // OpenAI: omitting `parameters` defines a function that takes no arguments.
    if (parameters === undefined || parameters === null) inputSchema = { type: 'object', properties: {} };
    else inputSchema = expectObject(parameters, `${param}.function.parameters`);
    const definition: ToolDefinition = { name, inputSchema };
    const description = optionalString(fn, 'description', `${param}.function.description`);
    if (description !== undefined) definition.description = description;
    const strict = optionalBoolean(fn, 'strict', `${param}.function.strict`);
    if (strict !== undefined) definition.strict = strict;
    return definition;
  });
  return tools.length > 0 ? tools : undefined;
}

function decodeToolChoice(value: unknown, tools: ToolDefinition[] | undefined): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    if (value === 'none') return { type: 'none' };
    if (value === 'auto') return { type: 'auto' };
    if (value === 'required') {
      if (tools === undefined)
        throw invalidParameter('tool_choice', "Invalid 'tool_choice': 'required' needs at least one tool in 'tools'.");
      return { type: 'required' };
    }
    throw invalidParameter(
      'tool_choice',
      `Invalid 'tool_choice': '${value}' is not one of 'none', 'auto', 'required' or a {type: 'function'} object.`,
    );
  }
  const choice = expectObject(value, 'tool_choice');
  const type = requiredString(choice, 'type', 'tool_choice.type');
  if (type !== 'function')
    throw invalidParameter('tool_choice.type', `Invalid 'tool_choice.type': only 'function' is supported, got '${type}'.`);
  const functionValue = choice['function'];
  if (functionValue === undefined || functionValue === null) throw missingParameter('tool_choice.function');
  const fn = expectObject(functionValue, 'tool_choice.function');
  const name = requiredString(fn, 'name', 'tool_choice.function.name');
  if (!tools?.some((tool) => tool.name === name)) {
    throw invalidParameter(
      'tool_choice.function.name',
      `Invalid 'tool_choice.function.name': no tool named '${name}' is defined in 'tools'.`,
    );
  }
  return { type: 'tool', name };
}

function decodeResponseFormat(value: unknown): ResponseFormat | undefined {
  if (value === undefined || value === null) return undefined;
  const format = expectObject(value, 'response_format');
  const type = requiredString(format, 'type', 'response_format.type');
  if (type === 'text') return { type: 'text' };
  if (type === 'json_object') return { type: 'json_object' };
  if (type !== 'json_schema') {
    throw invalidParameter(
      'response_format.type',
      `Invalid 'response_format.type': '${type}' is not one of 'text', 'json_object', 'json_schema'.`,
    );
  }
  const schemaValue = format['json_schema'];
  if (schemaValue === undefined || schemaValue === null) throw missingParameter('response_format.json_schema');
  const jsonSchema = expectObject(schemaValue, 'response_format.json_schema');
  const name = requiredString(jsonSchema, 'name', 'response_format.json_schema.name');
  if (!FUNCTION_NAME_PATTERN.test(name)) {
    throw invalidParameter(
      'response_format.json_schema.name',
      `Invalid 'response_format.json_schema.name': '${name}' must be 1 to 64 characters of a-z, A-Z, 0-9, '_' or '-'.`,
    );
  }
  const schema = jsonSchema['schema'];
  if (schema === undefined || schema === null) throw missingParameter('response_format.json_schema.schema');
  const result: ResponseFormat = { type: 'json_schema', name, schema: expectObject(schema, 'response_format.json_schema.schema') };
  const strict = optionalBoolean(jsonSchema, 'strict', 'response_format.json_schema.strict');
  if (strict !== undefined) result.strict = strict;
  const description = optionalString(jsonSchema, 'description', 'response_format.json_schema.description');
  if (description !== undefined) result.description = description;
  return result;
}

/**
 * Fields whose features this service cannot provide. Those that would change what the client gets back
 * (log probabilities, audio, web search, the legacy `functions`) are refused with a 400; sampling hints
 * the backends do not take are validated and reported in `ignoredParameters`.
 */
function decodeUnsupportedFeatures(body: JsonObject, ignoredParameters: string[]): void {
  if (optionalBoolean(body, 'logprobs') === true) {
    throw invalidParameter(
      'logprobs',
      "Invalid 'logprobs': log probabilities are not available from this service; omit 'logprobs' or set it to false.",
    );
  }
  const topLogprobs = optionalInteger(body, 'top_logprobs');
  if (topLogprobs !== undefined && topLogprobs !== 0) {
    throw invalidParameter(
      'top_logprobs',
      "Invalid 'top_logprobs': log probabilities are not available from this service; omit 'top_logprobs'.",
    );
  }
  const modalities = body['modalities'];
  if (modalities !== undefined && modalities !== null) {
    if (!Array.isArray(modalities)) throw wrongType('modalities', 'an array of strings', modalities);
    modalities.forEach((modality, index) => {
      if (modality !== 'text') {
        throw invalidParameter(`modalities[${index}]`, `Invalid 'modalities[${index}]': only 'text' output is supported by this service.`);
      }
    });
  }
  if (body['audio'] !== undefined && body['audio'] !== null) {
    throw invalidParameter('audio', "Invalid 'audio': audio output is not supported by this service.");
  }
  if (body['web_search_options'] !== undefined && body['web_search_options'] !== null) {
    throw invalidParameter('web_search_options', "Invalid 'web_search_options': web search is not available from this service.");
  }
  for (const legacy of ['functions', 'function_call'] as const) {
    if (body[legacy] !== undefined && body[legacy] !== null) {
      throw invalidParameter(
        legacy,
        `Invalid '${legacy}': the deprecated function-calling fields are not supported; use 'tools' and 'tool_choice'.`,
      );
    }
  }
  for (const penalty of ['frequency_penalty', 'presence_penalty'] as const) {
    const amount = optionalNumberInRange(body, penalty, -2, 2);
    if (amount !== undefined && amount !== 0) ignoredParameters.push(penalty);
  }
  const logitBias = body['logit_bias'];
  if (logitBias !== undefined && logitBias !== null) {
    if (Object.keys(expectObject(logitBias, 'logit_bias')).length > 0) ignoredParameters.push('logit_bias');
  }
  if (optionalString(body, 'verbosity') !== undefined) ignoredParameters.push('verbosity');
}
