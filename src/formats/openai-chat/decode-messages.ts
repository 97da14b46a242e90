/**
 * `messages` of a chat completions body -> the canonical conversation. System and developer messages,
 * wherever they stand, are joined (blank line between) into the one canonical system text; consecutive
 * `tool` messages become one canonical tool turn, each result named after its call; every `tool_calls`
 * entry must be answered by a `tool` message before the next user/assistant message (as OpenAI requires).
 * Content parts: text, `image_url` and `file` (inline `file_data`) by the shared part rules
 * (formats/shared/decode-parts.ts); `input_audio` and files by id are refused.
 */
import type {
  AssistantContentPart,
  DocumentPart,
  ImagePart,
  Message,
  TextPart,
  ToolResultPart,
  UserContentPart,
} from '../../core/generation.ts';
import { invalidMessages, invalidParameter, missingParameter } from '../../core/service-error.ts';
import { decodeFileData, decodeImageUrl, refuseFileId } from '../shared/decode-parts.ts';
import {
  expectObject,
  isObject,
  OPENAI_WORDING,
  optionalEnum,
  optionalString,
  requiredString,
  wrongType,
  type JsonObject,
} from '../shared/request-fields.ts';

const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

export interface DecodedMessages {
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

export function decodeMessages(value: unknown): DecodedMessages {
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
  const result = decodeImageUrl(requiredString(image, 'url', `${param}.image_url.url`), `${param}.image_url.url`, OPENAI_WORDING);
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
    refuseFileId(
      file,
      `${param}.file`,
      "file references are not supported in messages; send the document inline as 'file_data' (a base64 data URL).",
    );
    throw missingParameter(`${param}.file.file_data`);
  }
  const mediaType = decodeFileData(fileData, `${param}.file.file_data`, OPENAI_WORDING);
  const document: DocumentPart = { type: 'document', url: fileData, mediaType };
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
