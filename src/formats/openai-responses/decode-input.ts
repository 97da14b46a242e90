/**
 * The wire items of a `POST /v1/responses` body: `input` (a string, or message, function_call,
 * function_call_output, reasoning and item_reference items) and `instructions`, validated and
 * normalised as they are stored and listed (each item with an id: `msg_`/`fc_`/`fco_`/`rs_` + 48 hex).
 * decode-messages.ts turns them into canonical messages. Anything by `file_id` and every other item type
 * is refused (named in the message).
 */
import { newId, randomHex } from '../../core/ids.ts';
import { invalidMessages, invalidParameter, missingParameter } from '../../core/service-error.ts';
import { decodeFileData, decodeHttpUrl, decodeImageUrl, refuseFileId } from '../shared/decode-parts.ts';
import {
  expectObject,
  isObject,
  OPENAI_WORDING,
  optionalArray,
  optionalEnum,
  optionalString,
  requiredString,
  wrongType,
  type JsonObject,
} from '../shared/request-fields.ts';
import type { PendingItemReference } from './decoded-request.ts';
import type {
  FunctionCallItem,
  FunctionCallOutputItem,
  InputContent,
  InputImageContent,
  InputMessageItem,
  InputTextContent,
  InstructionMessageEcho,
  ItemStatus,
  OutputMessageItem,
  ReasoningItem,
  ResponseEcho,
  ResponseItem,
} from './wire-types.ts';

const MESSAGE_ROLES = ['user', 'assistant', 'system', 'developer'] as const;
const ITEM_STATUSES = ['in_progress', 'completed', 'incomplete'] as const;
const IMAGE_DETAILS = ['auto', 'low', 'high', 'original'] as const;

/** The decoded input: the items given in full, and the references (with their positions) to resolve. */
export function decodeInput(value: unknown): { items: ResponseItem[]; references: PendingItemReference[] } {
  if (value === undefined || value === null)
    throw missingParameter('input', "Missing required parameter: 'input' (a string or an array of input items).");
  if (typeof value === 'string') {
    if (value.length === 0) throw invalidParameter('input', "Invalid 'input': the input text must not be empty.");
    return {
      items: [
        {
          id: newId.responseMessageItem(),
          type: 'message',
          role: 'user',
          status: 'completed',
          content: [{ type: 'input_text', text: value }],
        },
      ],
      references: [],
    };
  }
  if (!Array.isArray(value)) throw wrongType('input', 'a string or an array of input items', value);
  if (value.length === 0) throw invalidParameter('input', "Invalid 'input': the array must contain at least one item.");
  const items: ResponseItem[] = [];
  const references: PendingItemReference[] = [];
  value.forEach((entry, index) => {
    const param = `input[${index}]`;
    const reference = decodeItemReference(entry, param);
    if (reference === undefined) items.push(decodeItem(entry, param));
    else references.push({ index, id: reference, param: `${param}.id` });
  });
  return { items, references };
}

/** The id of an `{"type": "item_reference", "id": ...}` item; undefined for any other item. */
function decodeItemReference(value: unknown, param: string): string | undefined {
  if (!isObject(value) || value['type'] !== 'item_reference') return undefined;
  const id = requiredString(value, 'id', `${param}.id`);
  if (id.length === 0) throw invalidParameter(`${param}.id`, `Invalid '${param}.id': the item id must not be empty.`);
  return id;
}

function decodeItem(value: unknown, param: string): ResponseItem {
  const item = expectObject(value, param);
  const type = optionalString(item, 'type', `${param}.type`);
  // An item without `type` but with `role` is a message (the SDK's EasyInputMessage).
  if (type === undefined) {
    if (item['role'] === undefined || item['role'] === null) throw missingParameter(`${param}.type`);
    return decodeMessageItem(item, param);
  }
  switch (type) {
    case 'message':
      return decodeMessageItem(item, param);
    case 'function_call':
      return decodeFunctionCallItem(item, param);
    case 'function_call_output':
      return decodeFunctionCallOutputItem(item, param);
    case 'reasoning':
      return decodeReasoningItem(item, param);
    default:
      throw invalidMessages(
        `${param}.type`,
        `Invalid '${param}.type': '${type}' items are not supported by this service; input items are 'message', 'function_call', 'function_call_output', 'reasoning' and 'item_reference'.`,
      );
  }
}

function itemId(item: JsonObject, param: string, create: () => string): string {
  const id = optionalString(item, 'id', `${param}.id`);
  return id === undefined || id.length === 0 ? create() : id;
}

function itemStatus(item: JsonObject, param: string): ItemStatus {
  return optionalEnum(item, 'status', ITEM_STATUSES, `${param}.status`) ?? 'completed';
}

function decodeMessageItem(item: JsonObject, param: string): InputMessageItem | OutputMessageItem {
  const roleValue = item['role'];
  if (roleValue === undefined || roleValue === null) throw missingParameter(`${param}.role`);
  if (typeof roleValue !== 'string') throw wrongType(`${param}.role`, 'a string', roleValue);
  if (!(MESSAGE_ROLES as readonly string[]).includes(roleValue)) {
    throw invalidMessages(
      `${param}.role`,
      `Invalid '${param}.role': '${roleValue}' is not one of 'user', 'assistant', 'system', 'developer'.`,
    );
  }
  const role = roleValue as (typeof MESSAGE_ROLES)[number];
  const content = item['content'];
  if (content === undefined || content === null) throw missingParameter(`${param}.content`);
  if (typeof content !== 'string' && !Array.isArray(content))
    throw wrongType(`${param}.content`, 'a string or an array of content parts', content);
  if (Array.isArray(content) && content.length === 0)
    throw invalidMessages(`${param}.content`, `Invalid '${param}.content': a message needs at least one content part.`);

  if (role === 'assistant') {
    const parts: OutputMessageItem['content'] =
      typeof content === 'string'
        ? [{ type: 'output_text', text: content, annotations: [] }]
        : content.map((part, index) => decodeAssistantPart(part, `${param}.content[${index}]`));
    return { id: itemId(item, param, newId.responseMessageItem), type: 'message', role, status: itemStatus(item, param), content: parts };
  }
  const parts: InputContent[] =
    typeof content === 'string'
      ? [{ type: 'input_text', text: content }]
      : content.map((part, index) => decodeInputPart(part, `${param}.content[${index}]`, role === 'user'));
  return { id: itemId(item, param, newId.responseMessageItem), type: 'message', role, status: 'completed', content: parts };
}

function decodeAssistantPart(value: unknown, param: string): OutputMessageItem['content'][number] {
  const part = expectObject(value, param);
  const type = requiredString(part, 'type', `${param}.type`);
  if (type === 'output_text') return { type: 'output_text', text: requiredString(part, 'text', `${param}.text`), annotations: [] };
  if (type === 'refusal') return { type: 'refusal', refusal: requiredString(part, 'refusal', `${param}.refusal`) };
  throw invalidMessages(`${param}.type`, `Invalid '${param}.type': assistant message parts are 'output_text' or 'refusal', got '${type}'.`);
}

/** A part of a user (any kind) or system/developer (text only) message. */
function decodeInputPart(value: unknown, param: string, mediaAllowed: boolean): InputContent {
  const part = expectObject(value, param);
  const type = requiredString(part, 'type', `${param}.type`);
  if (type === 'input_text') return { type: 'input_text', text: requiredString(part, 'text', `${param}.text`) };
  if (type === 'input_image' || type === 'input_file') {
    if (!mediaAllowed)
      throw invalidMessages(
        `${param}.type`,
        `Invalid '${param}.type': system and developer messages take only 'input_text' parts, got '${type}'.`,
      );
    return type === 'input_image' ? decodeImagePart(part, param) : decodeFilePart(part, param);
  }
  const expected = mediaAllowed ? "'input_text', 'input_image' or 'input_file'" : "'input_text'";
  throw invalidMessages(`${param}.type`, `Invalid '${param}.type': '${type}' is not an input content part; expected ${expected}.`);
}

function decodeImagePart(part: JsonObject, param: string): InputImageContent {
  const url = optionalString(part, 'image_url', `${param}.image_url`);
  if (url === undefined) {
    refuseFileId(
      part,
      param,
      "images by file id are not supported; send 'image_url' with an http(s) URL or a base64 'data:image/...;base64,' URL.",
    );
    throw missingParameter(`${param}.image_url`);
  }
  decodeImageUrl(url, `${param}.image_url`, OPENAI_WORDING);
  const detail = optionalEnum(part, 'detail', IMAGE_DETAILS, `${param}.detail`) ?? 'auto';
  return { type: 'input_image', image_url: url, detail };
}

function decodeFilePart(part: JsonObject, param: string): InputContent {
  const fileData = optionalString(part, 'file_data', `${param}.file_data`);
  const fileUrl = optionalString(part, 'file_url', `${param}.file_url`);
  const filename = optionalString(part, 'filename', `${param}.filename`);
  if (fileData === undefined && fileUrl === undefined) {
    refuseFileId(part, param, "files by id are not supported in input; send 'file_data' (a base64 data URL) or 'file_url'.");
    throw missingParameter(`${param}.file_data`, `Missing required parameter: '${param}.file_data' (or '${param}.file_url').`);
  }
  if (fileData !== undefined) decodeFileData(fileData, `${param}.file_data`, OPENAI_WORDING);
  if (fileUrl !== undefined) decodeHttpUrl(fileUrl, `${param}.file_url`, OPENAI_WORDING);
  const result: InputContent = { type: 'input_file' };
  if (fileData !== undefined) result.file_data = fileData;
  else if (fileUrl !== undefined) result.file_url = fileUrl;
  if (filename !== undefined) result.filename = filename;
  return result;
}

function decodeFunctionCallItem(item: JsonObject, param: string): FunctionCallItem {
  const callId = requiredString(item, 'call_id', `${param}.call_id`);
  if (callId.length === 0) throw invalidParameter(`${param}.call_id`, `Invalid '${param}.call_id': the call id must not be empty.`);
  const name = requiredString(item, 'name', `${param}.name`);
  if (name.length === 0) throw invalidParameter(`${param}.name`, `Invalid '${param}.name': the function name must not be empty.`);
  // Arguments are kept verbatim: models sometimes produce invalid JSON, and clients send it back as is.
  const args = requiredString(item, 'arguments', `${param}.arguments`);
  return {
    id: itemId(item, param, newId.responseFunctionCallItem),
    type: 'function_call',
    call_id: callId,
    name,
    arguments: args,
    status: itemStatus(item, param),
  };
}

function decodeFunctionCallOutputItem(item: JsonObject, param: string): FunctionCallOutputItem {
  const callId = requiredString(item, 'call_id', `${param}.call_id`);
  if (callId.length === 0) throw invalidParameter(`${param}.call_id`, `Invalid '${param}.call_id': the call id must not be empty.`);
  const outputValue = item['output'];
  if (outputValue === undefined || outputValue === null) throw missingParameter(`${param}.output`);
  let output: FunctionCallOutputItem['output'];
  if (typeof outputValue === 'string') output = outputValue;
  else if (Array.isArray(outputValue)) {
    output = outputValue.map((value, index): InputTextContent | InputImageContent => {
      const partParam = `${param}.output[${index}]`;
      const part = expectObject(value, partParam);
      const type = requiredString(part, 'type', `${partParam}.type`);
      if (type === 'input_text') return { type: 'input_text', text: requiredString(part, 'text', `${partParam}.text`) };
      if (type === 'input_image') return decodeImagePart(part, partParam);
      throw invalidMessages(
        `${partParam}.type`,
        `Invalid '${partParam}.type': function call output parts are 'input_text' or 'input_image', got '${type}'.`,
      );
    });
  } else throw wrongType(`${param}.output`, 'a string or an array of content parts', outputValue);
  return {
    id: itemId(item, param, () => `fco_${randomHex(48)}`),
    type: 'function_call_output',
    call_id: callId,
    output,
    status: 'completed',
  };
}

function decodeReasoningItem(item: JsonObject, param: string): ReasoningItem {
  const summary = optionalArray(item, 'summary', `${param}.summary`).map((value, index) => {
    const partParam = `${param}.summary[${index}]`;
    const part = expectObject(value, partParam);
    return { type: 'summary_text' as const, text: requiredString(part, 'text', `${partParam}.text`) };
  });
  const content = optionalArray(item, 'content', `${param}.content`).map((value, index) => {
    const partParam = `${param}.content[${index}]`;
    const part = expectObject(value, partParam);
    const type = requiredString(part, 'type', `${partParam}.type`);
    if (type !== 'reasoning_text')
      throw invalidMessages(
        `${partParam}.type`,
        `Invalid '${partParam}.type': reasoning content parts are 'reasoning_text', got '${type}'.`,
      );
    return { type: 'reasoning_text' as const, text: requiredString(part, 'text', `${partParam}.text`) };
  });
  const encryptedContent = optionalString(item, 'encrypted_content', `${param}.encrypted_content`) ?? null;
  return {
    id: itemId(item, param, newId.responseReasoningItem),
    type: 'reasoning',
    summary,
    content,
    encrypted_content: encryptedContent,
    status: itemStatus(item, param),
  };
}

export function decodeInstructions(value: unknown): { text: string | null; echo: ResponseEcho['instructions'] } {
  if (value === undefined || value === null) return { text: null, echo: null };
  if (typeof value === 'string') return { text: value.length > 0 ? value : null, echo: value };
  if (!Array.isArray(value)) throw wrongType('instructions', 'a string or an array of messages', value);
  const echo: InstructionMessageEcho[] = [];
  const texts: string[] = [];
  value.forEach((entry, index) => {
    const param = `instructions[${index}]`;
    const message = expectObject(entry, param);
    const type = optionalString(message, 'type', `${param}.type`);
    if (type !== undefined && type !== 'message')
      throw invalidParameter(`${param}.type`, `Invalid '${param}.type': instructions are 'message' items, got '${type}'.`);
    const role = requiredString(message, 'role', `${param}.role`);
    if (role !== 'system' && role !== 'developer') {
      throw invalidParameter(
        `${param}.role`,
        `Invalid '${param}.role': instructions are 'system' or 'developer' messages, got '${role}'; put other messages in 'input'.`,
      );
    }
    const content = message['content'];
    if (content === undefined || content === null) throw missingParameter(`${param}.content`);
    if (typeof content === 'string') {
      texts.push(content);
      echo.push({ type: 'message', role, content });
      return;
    }
    if (!Array.isArray(content)) throw wrongType(`${param}.content`, 'a string or an array of input_text parts', content);
    const parts = content.map((part, partIndex) => decodeInputPart(part, `${param}.content[${partIndex}]`, false) as InputTextContent);
    texts.push(parts.map((part) => part.text).join('\n'));
    echo.push({ type: 'message', role, content: parts });
  });
  const text = texts.filter((entry) => entry.length > 0).join('\n\n');
  return { text: text.length > 0 ? text : null, echo };
}
