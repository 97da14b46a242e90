/**
 * `messages` of a Messages body -> the canonical conversation. Roles alternate, starting with `user`
 * (SPEC; `compatible`: consecutive messages of one role are merged and an assistant may speak first).
 * A user turn's `tool_result` blocks become canonical `tool` messages (split into runs, order kept),
 * named after the matching earlier `tool_use`. Content blocks: text, Anthropic `image` (base64 or url),
 * SPEC `image_url`, `document` (base64 PDF, url, text) and `tool_result` from the user; text, `tool_use`,
 * `thinking` and `redacted_thinking` from the assistant. Unknown keys inside blocks are ignored, so blocks
 * copied from a real Anthropic response can be sent back. Image URLs and base64 data follow the shared
 * part rules (formats/shared/decode-parts.ts) in the Messages wording.
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
import { decodeHttpUrl, decodeImageUrl, requiredBase64 } from '../shared/decode-parts.ts';
import {
  isObject,
  type JsonObject,
  MESSAGES_WORDING as W,
  optionalString,
  present,
  requiredObject,
  requiredString,
  wrongType,
} from '../shared/request-fields.ts';

const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * `imagePaths` collects the wire path of every image block, in order. `compatible`: consecutive messages of one role are accepted (and merged into one turn) and the first
 * message may be the assistant's.
 */
export function decodeMessages(value: unknown, imagePaths: string[], compatible: boolean): Message[] {
  const messages = present(value);
  if (messages === undefined) throw missingParameter('messages');
  if (!Array.isArray(messages)) throw wrongType('messages', 'an array', messages, W);
  if (messages.length === 0) throw invalidMessages('messages', "'messages' must contain at least one message.");

  const decoded: Message[] = [];
  /** Tool-use ids of earlier assistant turns -> tool name, to check and name tool results. */
  const toolUses = new Map<string, string>();
  let previousRole: string | undefined;

  messages.forEach((raw, index) => {
    const path = `messages[${index}]`;
    if (!isObject(raw)) throw wrongType(path, 'an object', raw, W);
    const role = requiredString(raw, 'role', `${path}.role`, W);
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
      throw wrongType(`${path}.content`, 'a string or an array of content blocks', content, W);
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
    const type = requiredString(block, 'type', `${path}.type`, W);
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
    const type = requiredString(block, 'type', `${path}.type`, W);
    switch (type) {
      case 'text':
        content.push(decodeTextBlock(block, path));
        break;
      case 'tool_use': {
        const id = requiredString(block, 'id', `${path}.id`, W);
        if (id === '') throw invalidParameter(`${path}.id`, `'${path}.id' must not be empty.`);
        if (toolUses.has(id)) throw invalidMessages(`${path}.id`, `Tool use id '${id}' is used more than once in the conversation.`);
        const name = requiredString(block, 'name', `${path}.name`, W);
        if (name === '') throw invalidParameter(`${path}.name`, `'${path}.name' must not be empty.`);
        const input = present(block['input']);
        if (input === undefined) throw missingParameter(`${path}.input`);
        if (!isObject(input)) throw wrongType(`${path}.input`, 'a JSON object', input, W);
        toolUses.set(id, name);
        content.push({ type: 'tool-call', id, name, input: JSON.stringify(input) });
        break;
      }
      case 'thinking': {
        const text = requiredString(block, 'thinking', `${path}.thinking`, W);
        // Anthropic requires a signature; blocks produced from backends without signatures carry '' and are accepted.
        const signature = optionalString(block, 'signature', `${path}.signature`, W);
        content.push(signature ? { type: 'reasoning', text, signature } : { type: 'reasoning', text });
        break;
      }
      case 'redacted_thinking': {
        const data = requiredString(block, 'data', `${path}.data`, W);
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
  return { type: 'text', text: requiredString(block, 'text', `${path}.text`, W) };
}

/** Anthropic `image` block: `source` is `{type:'base64', media_type, data}` or `{type:'url', url}`. */
function decodeImageBlock(block: JsonObject, path: string): ImagePart {
  const source = requiredObject(block, 'source', `${path}.source`, W);
  const sourceType = requiredString(source, 'type', `${path}.source.type`, W);
  if (sourceType === 'base64') {
    const mediaType = requiredString(source, 'media_type', `${path}.source.media_type`, W);
    if (!IMAGE_MEDIA_TYPES.has(mediaType)) {
      throw invalidParameter(
        `${path}.source.media_type`,
        `'${path}.source.media_type' must be one of ${[...IMAGE_MEDIA_TYPES].join(', ')}, got '${mediaType}'.`,
      );
    }
    const data = requiredBase64(source, 'data', `${path}.source.data`, W);
    return { type: 'image', url: `data:${mediaType};base64,${data}`, mediaType };
  }
  if (sourceType === 'url') return { type: 'image', url: httpUrl(source, 'url', `${path}.source.url`) };
  throw invalidParameter(`${path}.source.type`, `'${path}.source.type' must be 'base64' or 'url', got '${sourceType}'.`);
}

/** SPEC image URL block: `{type:'image_url', image_url:{url, detail?}}` with an http(s) or `data:image/...;base64,` URL. */
function decodeImageUrlBlock(block: JsonObject, path: string): ImagePart {
  const imageUrl = requiredObject(block, 'image_url', `${path}.image_url`, W);
  const urlPath = `${path}.image_url.url`;
  const part = decodeImageUrl(requiredString(imageUrl, 'url', urlPath, W), urlPath, W);
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
  const source = requiredObject(block, 'source', `${path}.source`, W);
  const sourceType = requiredString(source, 'type', `${path}.source.type`, W);
  let part: DocumentPart;
  if (sourceType === 'base64') {
    const mediaType = requiredString(source, 'media_type', `${path}.source.media_type`, W);
    if (mediaType !== 'application/pdf') {
      throw invalidParameter(
        `${path}.source.media_type`,
        `'${path}.source.media_type' must be 'application/pdf' for a base64 document, got '${mediaType}'.`,
      );
    }
    part = { type: 'document', url: `data:${mediaType};base64,${requiredBase64(source, 'data', `${path}.source.data`, W)}`, mediaType };
  } else if (sourceType === 'url') {
    part = { type: 'document', url: httpUrl(source, 'url', `${path}.source.url`) };
  } else if (sourceType === 'text') {
    const mediaType = optionalString(source, 'media_type', `${path}.source.media_type`, W) ?? 'text/plain';
    if (mediaType !== 'text/plain') {
      throw invalidParameter(
        `${path}.source.media_type`,
        `'${path}.source.media_type' must be 'text/plain' for a text document, got '${mediaType}'.`,
      );
    }
    part = { type: 'document', text: requiredString(source, 'data', `${path}.source.data`, W), mediaType };
  } else {
    throw invalidParameter(`${path}.source.type`, `'${path}.source.type' must be 'base64', 'url' or 'text', got '${sourceType}'.`);
  }
  const title = optionalString(block, 'title', `${path}.title`, W);
  if (title !== undefined) part.title = title;
  return part;
}

function decodeToolResultBlock(block: JsonObject, path: string, toolUses: Map<string, string>, imagePaths: string[]): ToolResultPart {
  const toolUseId = requiredString(block, 'tool_use_id', `${path}.tool_use_id`, W);
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
      const type = requiredString(inner, 'type', `${innerPath}.type`, W);
      if (type === 'text') return decodeTextBlock(inner, innerPath);
      if (type === 'image' || type === 'image_url') imagePaths.push(innerPath);
      if (type === 'image') return decodeImageBlock(inner, innerPath);
      if (type === 'image_url') return decodeImageUrlBlock(inner, innerPath);
      throw invalidMessages(`${innerPath}.type`, `A tool_result may contain text and image blocks only, got '${type}'.`);
    });
  } else if (content !== undefined) {
    throw wrongType(`${path}.content`, 'a string or an array of content blocks', content, W);
  }
  const isError = present(block['is_error']);
  if (isError !== undefined) {
    if (typeof isError !== 'boolean') throw wrongType(`${path}.is_error`, 'a boolean', isError, W);
    if (isError) part.isError = true;
  }
  return part;
}

/** A content block must be an object. */
export function blockObject(value: unknown, path: string): JsonObject {
  if (!isObject(value)) throw wrongType(path, 'a content block object', value, W);
  return value;
}

/** `owner[key]`: a required http(s) URL. */
function httpUrl(owner: JsonObject, key: string, path: string): string {
  return decodeHttpUrl(requiredString(owner, key, path, W), path, W);
}
