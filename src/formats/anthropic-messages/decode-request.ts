/**
 * Anthropic Messages request -> canonical GenerationRequest, following docs/spec.md "Message request" (which
 * wins where it states a rule) and the Anthropic Messages API request shape for what SPEC leaves open.
 *
 * Strict on the way in (docs/design.md convention 4): every violation is a 400 ServiceError with a SPEC code
 * and the dotted `param` of the offending field. The rule used for codes throughout:
 *   - a required field is absent (or null)                 -> missing_parameter
 *   - a field has the wrong JSON type / malformed value     -> invalid_format
 *   - a field has the right type but a value not allowed    -> invalid_parameter
 *   - the conversation is malformed (roles, order, blocks)  -> invalid_messages
 * Optional fields given as `null` count as absent. Unknown top-level fields are rejected (never silently
 * dropped); unknown keys inside content blocks are ignored, so that blocks copied from a real Anthropic
 * response (e.g. `citations: null`) can be sent back unchanged.
 *
 * `output_config.format` (and the older beta `output_format`) ask for JSON-schema structured output and
 * become the canonical `json_schema` response format, in both validation modes. `requestValidation:
 * compatible` (DecodeOptions) accepts what the Anthropic API and its clients do where the SPEC is
 * stricter: consecutive messages of one role (merged into one turn), an assistant message first, a tool
 * without `description`, and `temperature` up to 2.
 */
import type {
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
  AssistantContentPart,
} from '../../core/generation.ts';
import { invalidFormat, invalidMessages, invalidParameter, missingParameter } from '../../core/service-error.ts';
import { maxTemperature, SPEC_DECODE_OPTIONS, type DecodeOptions } from '../shared/decode-options.ts';

/** What a `/v1/messages` body decodes to: the canonical request plus the transport choices that are not generation parameters. */
export interface DecodedMessagesRequest {
  request: GenerationRequest;
  /** True when the client asked for server-sent events (`stream: true`). */
  stream: boolean;
  /** Anthropic `service_tier` as sent (default `auto`). No backend takes it; kept for logging and echo. */
  serviceTier: 'auto' | 'standard_only';
  /**
   * Wire path of the first image block (`messages[2].content[0]`, or inside a tool_result
   * `messages[2].content[0].content[1]`), for the 400 when the model lacks `vision`. Canonical message
   * indexes differ from the wire's (tool results become their own messages), hence this.
   */
  imageParam?: string;
}

/** SPEC "Message-style `stop_sequences`": typically at most 5. */
export const MAX_STOP_SEQUENCES = 5;
/** SPEC "Message-style `thinking.budget_tokens`": >= 1024 (and < max_tokens). */
export const MIN_THINKING_BUDGET_TOKENS = 1024;

/** Top-level fields of SPEC "Message request"; `cache_control` is accepted as a caching hint with no effect on the answer. */
const KNOWN_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'temperature',
  'stream',
  'top_p',
  'top_k',
  'stop_sequences',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
  'service_tier',
  'cache_control',
  'output_config',
  'output_format',
]);

/** `name` of the canonical json_schema format decoded from `output_config.format` (the wire has none). */
export const OUTPUT_FORMAT_NAME = 'output';

const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Anthropic tool-name rule. */
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,128}$/;
const BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/;
const DATA_IMAGE_URL_PATTERN = /^data:(image\/[a-zA-Z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/;

type JsonObject = Record<string, unknown>;

/**
 * Decodes a `POST /v1/messages` body. Throws a 400 ServiceError on the first violation found, checking
 * fields in SPEC table order.
 */
export function decodeMessagesRequest(body: unknown, options: DecodeOptions = SPEC_DECODE_OPTIONS): DecodedMessagesRequest {
  return decodeBody(body, { maxTokensRequired: true, allowStream: true }, options);
}

/**
 * Decodes a `POST /v1/messages/count_tokens` body: a message request without `max_tokens` (accepted and
 * checked when given) and without `stream`. Returns the canonical request to count.
 */
export function decodeCountTokensRequest(body: unknown, options: DecodeOptions = SPEC_DECODE_OPTIONS): GenerationRequest {
  return decodeBody(body, { maxTokensRequired: false, allowStream: false }, options).request;
}

function decodeBody(
  body: unknown,
  mode: { maxTokensRequired: boolean; allowStream: boolean },
  options: DecodeOptions,
): DecodedMessagesRequest {
  const compatible = options.validation === 'compatible';
  if (!isObject(body)) throw invalidFormat(null, `The request body must be a JSON object, got ${describe(body)}.`);

  for (const key of Object.keys(body)) {
    if (!KNOWN_FIELDS.has(key) || (key === 'stream' && !mode.allowStream)) {
      throw invalidParameter(key, `Unknown parameter: '${key}'. This endpoint does not support it.`);
    }
  }

  const model = requiredString(body, 'model', 'model');
  if (model.trim() === '') throw invalidParameter('model', "'model' must not be empty.");

  const imagePaths: string[] = [];
  const messages = decodeMessages(body['messages'], imagePaths, compatible);

  const request: GenerationRequest = { model, messages };

  const maxTokens = present(body['max_tokens']);
  if (maxTokens === undefined) {
    if (mode.maxTokensRequired) throw missingParameter('max_tokens');
  } else {
    request.maxOutputTokens = integerAtLeast(maxTokens, 'max_tokens', 1);
  }

  const system = present(body['system']);
  if (system !== undefined) {
    const text = decodeSystem(system);
    if (text !== '') request.system = text;
  }

  const temperature = present(body['temperature']);
  if (temperature !== undefined) request.temperature = numberInRange(temperature, 'temperature', maxTemperature(options));

  const stream = present(body['stream']);
  if (stream !== undefined && typeof stream !== 'boolean')
    throw invalidFormat('stream', `'stream' must be a boolean, got ${describe(stream)}.`);

  const topP = present(body['top_p']);
  if (topP !== undefined) request.topP = numberInRange(topP, 'top_p', 1);

  const topK = present(body['top_k']);
  if (topK !== undefined) request.topK = integerAtLeast(topK, 'top_k', 1);

  const stopSequences = present(body['stop_sequences']);
  if (stopSequences !== undefined) {
    const decoded = decodeStopSequences(stopSequences);
    if (decoded.length > 0) request.stopSequences = decoded;
  }

  const tools = present(body['tools']);
  if (tools !== undefined) {
    const decoded = decodeTools(tools, compatible);
    if (decoded.length > 0) request.tools = decoded;
  }

  const toolChoice = present(body['tool_choice']);
  if (toolChoice !== undefined) {
    const decoded = decodeToolChoice(toolChoice, request.tools ?? []);
    request.toolChoice = decoded.choice;
    if (decoded.parallelToolCalls !== undefined) request.parallelToolCalls = decoded.parallelToolCalls;
  }

  const thinking = present(body['thinking']);
  if (thinking !== undefined) {
    const budgetTokens = decodeThinking(thinking, request.maxOutputTokens);
    if (budgetTokens !== undefined) request.thinking = { budgetTokens };
  }

  const metadata = present(body['metadata']);
  if (metadata !== undefined) {
    const decoded = decodeMetadata(metadata);
    if (decoded.user !== undefined) request.user = decoded.user;
    if (Object.keys(decoded.rest).length > 0) request.metadata = decoded.rest;
  }

  const outputFormat = decodeOutputFormat(present(body['output_config']), present(body['output_format']));
  if (outputFormat !== undefined) request.responseFormat = outputFormat;

  let serviceTier: DecodedMessagesRequest['serviceTier'] = 'auto';
  const tier = present(body['service_tier']);
  if (tier !== undefined) {
    if (typeof tier !== 'string') throw invalidFormat('service_tier', `'service_tier' must be a string, got ${describe(tier)}.`);
    if (tier !== 'auto' && tier !== 'standard_only') {
      throw invalidParameter('service_tier', `'service_tier' must be 'auto' or 'standard_only', got '${tier}'.`);
    }
    serviceTier = tier;
  }

  const decoded: DecodedMessagesRequest = { request, stream: stream === true, serviceTier };
  if (imagePaths[0] !== undefined) decoded.imageParam = imagePaths[0];
  return decoded;
}

// ---------------------------------------------------------------------------------------------------
// messages

/** `imagePaths` collects the wire path of every image block, in order. */
/**
 * `compatible`: consecutive messages of one role are accepted (and merged into one turn) and the first
 * message may be the assistant's.
 */
function decodeMessages(value: unknown, imagePaths: string[], compatible: boolean): Message[] {
  const messages = present(value);
  if (messages === undefined) throw missingParameter('messages');
  if (!Array.isArray(messages)) throw invalidFormat('messages', `'messages' must be an array, got ${describe(messages)}.`);
  if (messages.length === 0) throw invalidMessages('messages', "'messages' must contain at least one message.");

  const decoded: Message[] = [];
  /** Tool-use ids of earlier assistant turns -> tool name, to check and name tool results. */
  const toolUses = new Map<string, string>();
  let previousRole: string | undefined;

  messages.forEach((raw, index) => {
    const path = `messages[${index}]`;
    if (!isObject(raw)) throw invalidFormat(path, `'${path}' must be an object, got ${describe(raw)}.`);
    const role = requiredString(raw, 'role', `${path}.role`);
    if (role !== 'user' && role !== 'assistant') {
      throw invalidMessages(
        `${path}.role`,
        `'${path}.role' must be 'user' or 'assistant', got '${role}'. System text goes in the top-level 'system' field.`,
      );
    }
    if (index === 0 && role !== 'user' && !compatible) throw invalidMessages(`${path}.role`, 'The first message must use the user role.');
    if (role === previousRole && !compatible) {
      throw invalidMessages(
        `${path}.role`,
        `Roles must alternate between user and assistant, but messages[${index - 1}] and ${path} are both '${role}'.`,
      );
    }
    previousRole = role;

    const isFinalAssistant = role === 'assistant' && index === messages.length - 1;
    const content = present(raw['content']);
    if (content === undefined) throw missingParameter(`${path}.content`);
    if (typeof content !== 'string' && !Array.isArray(content)) {
      throw invalidFormat(`${path}.content`, `'${path}.content' must be a string or an array of content blocks, got ${describe(content)}.`);
    }
    if (content.length === 0) {
      // Anthropic's rule: only a final assistant message (an empty prefill) may be empty; it says nothing, so it is left out.
      if (isFinalAssistant) return;
      throw invalidMessages(`${path}.content`, `'${path}.content' must not be empty.`);
    }
    // SPEC: a string content is converted into a text block.
    const blocks: unknown[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    if (role === 'user') decoded.push(...decodeUserBlocks(blocks, `${path}.content`, toolUses, typeof content === 'string', imagePaths));
    else decoded.push(decodeAssistantBlocks(blocks, `${path}.content`, toolUses, typeof content === 'string'));
  });
  return compatible ? mergeAdjacentTurns(decoded) : decoded;
}

/** Joins neighbouring canonical messages of one role into one (what the Anthropic API does with them). */
function mergeAdjacentTurns(messages: Message[]): Message[] {
  const merged: Message[] = [];
  for (const message of messages) {
    const last = merged.at(-1);
    if (last?.role === 'user' && message.role === 'user') last.content.push(...message.content);
    else if (last?.role === 'assistant' && message.role === 'assistant') last.content.push(...message.content);
    else if (last?.role === 'tool' && message.role === 'tool') last.content.push(...message.content);
    else merged.push(message);
  }
  return merged;
}

/**
 * One Anthropic user turn may hold tool results and ordinary content; the canonical model keeps tool
 * results in `tool` messages, so the turn becomes one message per consecutive run of each kind, in order.
 */
function decodeUserBlocks(
  blocks: unknown[],
  contentPath: string,
  toolUses: Map<string, string>,
  fromString: boolean,
  imagePaths: string[],
): Message[] {
  const result: Message[] = [];
  for (let index = 0; index < blocks.length; index++) {
    const path = fromString ? contentPath : `${contentPath}[${index}]`;
    const block = blockObject(blocks[index], path);
    const type = requiredString(block, 'type', `${path}.type`);
    let part: UserContentPart | ToolResultPart;
    switch (type) {
      case 'text':
        part = decodeTextBlock(block, path);
        break;
      case 'image':
        part = decodeImageBlock(block, path);
        imagePaths.push(path);
        break;
      case 'image_url':
        part = decodeImageUrlBlock(block, path);
        imagePaths.push(path);
        break;
      case 'document':
        part = decodeDocumentBlock(block, path);
        break;
      case 'tool_result':
        part = decodeToolResultBlock(block, path, toolUses, imagePaths);
        break;
      case 'tool_use':
      case 'thinking':
      case 'redacted_thinking':
        throw invalidMessages(`${path}.type`, `A '${type}' block may only appear in an assistant message.`);
      default:
        throw invalidMessages(
          `${path}.type`,
          `Unsupported content block type '${type}' in a user message; use text, image, image_url, document or tool_result.`,
        );
    }
    const last = result.at(-1);
    if (part.type === 'tool-result') {
      if (last?.role === 'tool') last.content.push(part);
      else result.push({ role: 'tool', content: [part] });
    } else if (last?.role === 'user') {
      last.content.push(part);
    } else {
      result.push({ role: 'user', content: [part] });
    }
  }
  return result;
}

function decodeAssistantBlocks(blocks: unknown[], contentPath: string, toolUses: Map<string, string>, fromString: boolean): Message {
  const content: AssistantContentPart[] = [];
  for (let index = 0; index < blocks.length; index++) {
    const path = fromString ? contentPath : `${contentPath}[${index}]`;
    const block = blockObject(blocks[index], path);
    const type = requiredString(block, 'type', `${path}.type`);
    switch (type) {
      case 'text':
        content.push(decodeTextBlock(block, path));
        break;
      case 'tool_use': {
        const id = requiredString(block, 'id', `${path}.id`);
        if (id === '') throw invalidParameter(`${path}.id`, `'${path}.id' must not be empty.`);
        if (toolUses.has(id)) throw invalidMessages(`${path}.id`, `Tool use id '${id}' is used more than once in the conversation.`);
        const name = requiredString(block, 'name', `${path}.name`);
        if (name === '') throw invalidParameter(`${path}.name`, `'${path}.name' must not be empty.`);
        const input = present(block['input']);
        if (input === undefined) throw missingParameter(`${path}.input`);
        if (!isObject(input)) throw invalidFormat(`${path}.input`, `'${path}.input' must be a JSON object, got ${describe(input)}.`);
        toolUses.set(id, name);
        content.push({ type: 'tool-call', id, name, input: JSON.stringify(input) });
        break;
      }
      case 'thinking': {
        const text = requiredString(block, 'thinking', `${path}.thinking`);
        // Anthropic requires a signature; blocks produced from backends without signatures carry '' and are accepted.
        const signature = optionalString(block, 'signature', `${path}.signature`);
        content.push(signature ? { type: 'reasoning', text, signature } : { type: 'reasoning', text });
        break;
      }
      case 'redacted_thinking': {
        const data = requiredString(block, 'data', `${path}.data`);
        content.push({ type: 'reasoning', text: '', redactedData: data });
        break;
      }
      case 'image':
      case 'image_url':
      case 'document':
      case 'tool_result':
        throw invalidMessages(`${path}.type`, `A '${type}' block may only appear in a user message.`);
      default:
        throw invalidMessages(
          `${path}.type`,
          `Unsupported content block type '${type}' in an assistant message; use text, tool_use, thinking or redacted_thinking.`,
        );
    }
  }
  return { role: 'assistant', content };
}

function decodeTextBlock(block: JsonObject, path: string): TextPart {
  return { type: 'text', text: requiredString(block, 'text', `${path}.text`) };
}

/** Anthropic `image` block: `source` is `{type:'base64', media_type, data}` or `{type:'url', url}`. */
function decodeImageBlock(block: JsonObject, path: string): ImagePart {
  const source = requiredObject(block, 'source', `${path}.source`);
  const sourceType = requiredString(source, 'type', `${path}.source.type`);
  if (sourceType === 'base64') {
    const mediaType = requiredString(source, 'media_type', `${path}.source.media_type`);
    if (!IMAGE_MEDIA_TYPES.has(mediaType)) {
      throw invalidParameter(
        `${path}.source.media_type`,
        `'${path}.source.media_type' must be one of ${[...IMAGE_MEDIA_TYPES].join(', ')}, got '${mediaType}'.`,
      );
    }
    const data = base64Data(source, `${path}.source.data`);
    return { type: 'image', url: `data:${mediaType};base64,${data}`, mediaType };
  }
  if (sourceType === 'url') return { type: 'image', url: httpUrl(source, 'url', `${path}.source.url`) };
  throw invalidParameter(`${path}.source.type`, `'${path}.source.type' must be 'base64' or 'url', got '${sourceType}'.`);
}

/** SPEC image URL block: `{type:'image_url', image_url:{url, detail?}}` with an http(s) or `data:image/...;base64,` URL. */
function decodeImageUrlBlock(block: JsonObject, path: string): ImagePart {
  const imageUrl = requiredObject(block, 'image_url', `${path}.image_url`);
  const urlPath = `${path}.image_url.url`;
  const url = requiredString(imageUrl, 'url', urlPath);
  const part: ImagePart = { type: 'image', url };
  if (url.startsWith('data:')) {
    const match = DATA_IMAGE_URL_PATTERN.exec(url);
    if (!match) throw invalidFormat(urlPath, `'${urlPath}' must be an http(s) URL or a 'data:image/<type>;base64,<data>' URL.`);
    part.mediaType = match[1]!;
  } else if (!isHttpUrl(url)) {
    throw invalidFormat(urlPath, `'${urlPath}' must be an http(s) URL or a 'data:image/<type>;base64,<data>' URL.`);
  }
  const detail = present(imageUrl['detail']);
  if (detail !== undefined) {
    if (detail !== 'auto' && detail !== 'low' && detail !== 'high') {
      throw invalidParameter(`${path}.image_url.detail`, `'${path}.image_url.detail' must be 'auto', 'low' or 'high'.`);
    }
    part.detail = detail;
  }
  return part;
}

/** Anthropic `document` block: `source` is base64 PDF, a URL, or plain text. */
function decodeDocumentBlock(block: JsonObject, path: string): DocumentPart {
  const source = requiredObject(block, 'source', `${path}.source`);
  const sourceType = requiredString(source, 'type', `${path}.source.type`);
  let part: DocumentPart;
  if (sourceType === 'base64') {
    const mediaType = requiredString(source, 'media_type', `${path}.source.media_type`);
    if (mediaType !== 'application/pdf') {
      throw invalidParameter(
        `${path}.source.media_type`,
        `'${path}.source.media_type' must be 'application/pdf' for a base64 document, got '${mediaType}'.`,
      );
    }
    part = { type: 'document', url: `data:${mediaType};base64,${base64Data(source, `${path}.source.data`)}`, mediaType };
  } else if (sourceType === 'url') {
    part = { type: 'document', url: httpUrl(source, 'url', `${path}.source.url`) };
  } else if (sourceType === 'text') {
    const mediaType = optionalString(source, 'media_type', `${path}.source.media_type`) ?? 'text/plain';
    if (mediaType !== 'text/plain') {
      throw invalidParameter(
        `${path}.source.media_type`,
        `'${path}.source.media_type' must be 'text/plain' for a text document, got '${mediaType}'.`,
      );
    }
    part = { type: 'document', text: requiredString(source, 'data', `${path}.source.data`), mediaType };
  } else {
    throw invalidParameter(`${path}.source.type`, `'${path}.source.type' must be 'base64', 'url' or 'text', got '${sourceType}'.`);
  }
  const title = optionalString(block, 'title', `${path}.title`);
  if (title !== undefined) part.title = title;
  return part;
}

function decodeToolResultBlock(block: JsonObject, path: string, toolUses: Map<string, string>, imagePaths: string[]): ToolResultPart {
  const toolUseId = requiredString(block, 'tool_use_id', `${path}.tool_use_id`);
  const toolName = toolUses.get(toolUseId);
  if (toolName === undefined) {
    throw invalidMessages(
      `${path}.tool_use_id`,
      `'${path}.tool_use_id' is '${toolUseId}', which matches no tool_use block of an earlier assistant message.`,
    );
  }
  const part: ToolResultPart = { type: 'tool-result', toolCallId: toolUseId, toolName, content: '' };
  const content = present(block['content']);
  if (typeof content === 'string') {
    part.content = content;
  } else if (Array.isArray(content)) {
    part.content = content.map((raw, index) => {
      const innerPath = `${path}.content[${index}]`;
      const inner = blockObject(raw, innerPath);
      const type = requiredString(inner, 'type', `${innerPath}.type`);
      if (type === 'text') return decodeTextBlock(inner, innerPath);
      if (type === 'image' || type === 'image_url') imagePaths.push(innerPath);
      if (type === 'image') return decodeImageBlock(inner, innerPath);
      if (type === 'image_url') return decodeImageUrlBlock(inner, innerPath);
      throw invalidMessages(`${innerPath}.type`, `A tool_result may contain text and image blocks only, got '${type}'.`);
    });
  } else if (content !== undefined) {
    throw invalidFormat(`${path}.content`, `'${path}.content' must be a string or an array of content blocks, got ${describe(content)}.`);
  }
  const isError = present(block['is_error']);
  if (isError !== undefined) {
    if (typeof isError !== 'boolean')
      throw invalidFormat(`${path}.is_error`, `'${path}.is_error' must be a boolean, got ${describe(isError)}.`);
    if (isError) part.isError = true;
  }
  return part;
}

// ---------------------------------------------------------------------------------------------------
// other top-level fields

/** SPEC: a string or an array of text blocks; the blocks are joined with newlines into the canonical system text. */
function decodeSystem(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw invalidFormat('system', `'system' must be a string or an array of text blocks, got ${describe(value)}.`);
  return value
    .map((raw, index) => {
      const path = `system[${index}]`;
      const block = blockObject(raw, path);
      const type = requiredString(block, 'type', `${path}.type`);
      if (type !== 'text') throw invalidParameter(`${path}.type`, `System blocks must be text blocks, got '${type}'.`);
      return requiredString(block, 'text', `${path}.text`);
    })
    .join('\n');
}

function decodeStopSequences(value: unknown): string[] {
  if (!Array.isArray(value)) throw invalidFormat('stop_sequences', `'stop_sequences' must be an array of strings, got ${describe(value)}.`);
  if (value.length > MAX_STOP_SEQUENCES) {
    throw invalidParameter('stop_sequences', `'stop_sequences' may hold at most ${MAX_STOP_SEQUENCES} entries, got ${value.length}.`);
  }
  return value.map((entry, index) => {
    const path = `stop_sequences[${index}]`;
    if (typeof entry !== 'string') throw invalidFormat(path, `'${path}' must be a string, got ${describe(entry)}.`);
    if (entry === '') throw invalidParameter(path, `'${path}' must not be empty.`);
    return entry;
  });
}

/**
 * SPEC: each tool has name, description and input_schema, all required (`compatible`: description
 * optional, as in the Anthropic API). Only custom (client) tools are supported.
 */
function decodeTools(value: unknown, compatible: boolean): ToolDefinition[] {
  if (!Array.isArray(value)) throw invalidFormat('tools', `'tools' must be an array, got ${describe(value)}.`);
  const names = new Set<string>();
  return value.map((raw, index) => {
    const path = `tools[${index}]`;
    if (!isObject(raw)) throw invalidFormat(path, `'${path}' must be an object, got ${describe(raw)}.`);
    const type = present(raw['type']);
    if (type !== undefined && type !== 'custom') {
      throw invalidParameter(
        `${path}.type`,
        `Only custom tools (name, description, input_schema) are supported, got type '${String(type)}'.`,
      );
    }
    const name = requiredString(raw, 'name', `${path}.name`);
    if (!TOOL_NAME_PATTERN.test(name)) {
      throw invalidParameter(`${path}.name`, `'${path}.name' must be 1-128 characters of letters, digits, '_' or '-', got '${name}'.`);
    }
    if (names.has(name)) throw invalidParameter(`${path}.name`, `Tool name '${name}' is declared more than once.`);
    names.add(name);
    const description = compatible
      ? optionalString(raw, 'description', `${path}.description`)
      : requiredString(raw, 'description', `${path}.description`);
    const inputSchema = requiredObject(raw, 'input_schema', `${path}.input_schema`);
    if (inputSchema['type'] !== 'object') {
      throw invalidParameter(`${path}.input_schema.type`, `'${path}.input_schema' must be a JSON Schema with type 'object'.`);
    }
    return description === undefined ? { name, inputSchema } : { name, description, inputSchema };
  });
}

/** SPEC: `auto` (default), `any`, or `{type:'tool', name}`; Anthropic's `none` and `disable_parallel_tool_use` too. */
function decodeToolChoice(value: unknown, tools: ToolDefinition[]): { choice: ToolChoice; parallelToolCalls?: boolean } {
  let type: string;
  let object: JsonObject | undefined;
  if (typeof value === 'string') {
    type = value;
  } else if (isObject(value)) {
    object = value;
    type = requiredString(value, 'type', 'tool_choice.type');
  } else {
    throw invalidFormat('tool_choice', `'tool_choice' must be a string or an object, got ${describe(value)}.`);
  }
  const typePath = object ? 'tool_choice.type' : 'tool_choice';
  let choice: ToolChoice;
  switch (type) {
    case 'auto':
      choice = { type: 'auto' };
      break;
    case 'none':
      choice = { type: 'none' };
      break;
    case 'any':
      if (tools.length === 0) throw invalidParameter(typePath, "tool_choice 'any' needs at least one tool in 'tools'.");
      choice = { type: 'required' };
      break;
    case 'tool': {
      if (!object)
        throw invalidParameter('tool_choice', 'tool_choice \'tool\' must be an object with a \'name\': {"type":"tool","name":"..."}.');
      const name = requiredString(object, 'name', 'tool_choice.name');
      if (!tools.some((tool) => tool.name === name)) {
        throw invalidParameter('tool_choice.name', `'tool_choice.name' is '${name}', which is not a tool declared in 'tools'.`);
      }
      choice = { type: 'tool', name };
      break;
    }
    default:
      throw invalidParameter(typePath, `'${typePath}' must be 'auto', 'any', 'tool' or 'none', got '${type}'.`);
  }
  const result: { choice: ToolChoice; parallelToolCalls?: boolean } = { choice };
  const disableParallel = object ? present(object['disable_parallel_tool_use']) : undefined;
  if (disableParallel !== undefined) {
    if (typeof disableParallel !== 'boolean') {
      throw invalidFormat(
        'tool_choice.disable_parallel_tool_use',
        `'tool_choice.disable_parallel_tool_use' must be a boolean, got ${describe(disableParallel)}.`,
      );
    }
    result.parallelToolCalls = !disableParallel;
  }
  return result;
}

/**
 * SPEC: `type` must be `enabled`, with `budget_tokens` >= 1024 and < max_tokens. Anthropic's `disabled` is
 * accepted and means no thinking. Returns the budget, or undefined for no thinking.
 */
function decodeThinking(value: unknown, maxOutputTokens: number | undefined): number | undefined {
  if (!isObject(value)) throw invalidFormat('thinking', `'thinking' must be an object, got ${describe(value)}.`);
  const type = requiredString(value, 'type', 'thinking.type');
  if (type === 'disabled') return undefined;
  if (type !== 'enabled') throw invalidParameter('thinking.type', `'thinking.type' must be 'enabled' (or 'disabled'), got '${type}'.`);
  const budget = present(value['budget_tokens']);
  if (budget === undefined) throw missingParameter('thinking.budget_tokens');
  const budgetTokens = integerAtLeast(budget, 'thinking.budget_tokens', MIN_THINKING_BUDGET_TOKENS);
  if (maxOutputTokens !== undefined && budgetTokens >= maxOutputTokens) {
    throw invalidParameter(
      'thinking.budget_tokens',
      `'thinking.budget_tokens' (${budgetTokens}) must be less than 'max_tokens' (${maxOutputTokens}).`,
    );
  }
  return budgetTokens;
}

/**
 * `output_config` (`{format: {type: 'json_schema', schema}}`) or the older beta `output_format`
 * (`{type: 'json_schema', schema}`) -> the canonical json_schema response format. Only `format` is
 * honoured in `output_config`; `effort` and other members are refused rather than dropped.
 */
function decodeOutputFormat(outputConfig: unknown, outputFormat: unknown): ResponseFormat | undefined {
  if (outputConfig !== undefined && outputFormat !== undefined) {
    throw invalidParameter('output_format', "Send either 'output_config.format' or 'output_format' (its older spelling), not both.");
  }
  if (outputFormat !== undefined) return decodeJsonOutputFormat(outputFormat, 'output_format');
  if (outputConfig === undefined) return undefined;
  if (!isObject(outputConfig)) throw invalidFormat('output_config', `'output_config' must be an object, got ${describe(outputConfig)}.`);
  for (const key of Object.keys(outputConfig)) {
    if (key !== 'format' && present(outputConfig[key]) !== undefined) {
      throw invalidParameter(
        `output_config.${key}`,
        `'output_config.${key}' is not supported by this service; only 'output_config.format' is.`,
      );
    }
  }
  const format = present(outputConfig['format']);
  return format === undefined ? undefined : decodeJsonOutputFormat(format, 'output_config.format');
}

function decodeJsonOutputFormat(value: unknown, path: string): ResponseFormat {
  if (!isObject(value)) throw invalidFormat(path, `'${path}' must be an object, got ${describe(value)}.`);
  const type = requiredString(value, 'type', `${path}.type`);
  if (type !== 'json_schema') throw invalidParameter(`${path}.type`, `'${path}.type' must be 'json_schema', got '${type}'.`);
  const schema = requiredObject(value, 'schema', `${path}.schema`);
  return { type: 'json_schema', name: OUTPUT_FORMAT_NAME, schema };
}

/** `metadata.user_id` becomes the canonical end-user id; other string entries are kept as metadata. */
function decodeMetadata(value: unknown): { user?: string; rest: Record<string, string> } {
  if (!isObject(value)) throw invalidFormat('metadata', `'metadata' must be an object, got ${describe(value)}.`);
  const result: { user?: string; rest: Record<string, string> } = { rest: {} };
  for (const [key, entry] of Object.entries(value)) {
    if (entry === null || entry === undefined) continue;
    if (typeof entry !== 'string') throw invalidFormat(`metadata.${key}`, `'metadata.${key}' must be a string, got ${describe(entry)}.`);
    if (key === 'user_id') result.user = entry;
    else result.rest[key] = entry;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------
// field helpers

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Null counts as absent for every field. */
function present(value: unknown): unknown {
  return value === null ? undefined : value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

function requiredString(owner: JsonObject, key: string, path: string): string {
  const value = present(owner[key]);
  if (value === undefined) throw missingParameter(path);
  if (typeof value !== 'string') throw invalidFormat(path, `'${path}' must be a string, got ${describe(value)}.`);
  return value;
}

function optionalString(owner: JsonObject, key: string, path: string): string | undefined {
  const value = present(owner[key]);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidFormat(path, `'${path}' must be a string, got ${describe(value)}.`);
  return value;
}

function requiredObject(owner: JsonObject, key: string, path: string): JsonObject {
  const value = present(owner[key]);
  if (value === undefined) throw missingParameter(path);
  if (!isObject(value)) throw invalidFormat(path, `'${path}' must be an object, got ${describe(value)}.`);
  return value;
}

/** A content block must be an object; the conversation is malformed otherwise. */
function blockObject(value: unknown, path: string): JsonObject {
  if (!isObject(value)) throw invalidFormat(path, `'${path}' must be a content block object, got ${describe(value)}.`);
  return value;
}

function integerAtLeast(value: unknown, path: string, minimum: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalidFormat(path, `'${path}' must be an integer, got ${describe(value)}.`);
  if (!Number.isInteger(value)) throw invalidParameter(path, `'${path}' must be an integer, got ${value}.`);
  if (value < minimum) throw invalidParameter(path, `'${path}' must be >= ${minimum}, got ${value}.`);
  return value;
}

/** SPEC: temperature and top_p are 0.0 to 1.0 (`compatible`: temperature up to 2). */
function numberInRange(value: unknown, path: string, maximum: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalidFormat(path, `'${path}' must be a number, got ${describe(value)}.`);
  if (value < 0 || value > maximum) throw invalidParameter(path, `'${path}' must be between 0.0 and ${maximum.toFixed(1)}, got ${value}.`);
  return value;
}

function base64Data(source: JsonObject, path: string): string {
  const data = requiredString(source, 'data', path);
  if (data === '') throw invalidParameter(path, `'${path}' must not be empty.`);
  if (!BASE64_PATTERN.test(data)) throw invalidFormat(path, `'${path}' must be base64 data (without a 'data:' prefix).`);
  return data;
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const protocol = new URL(text).protocol;
  return protocol === 'http:' || protocol === 'https:';
}

function httpUrl(owner: JsonObject, key: string, path: string): string {
  const url = requiredString(owner, key, path);
  if (!isHttpUrl(url)) throw invalidFormat(path, `'${path}' must be an http(s) URL.`);
  return url;
}
