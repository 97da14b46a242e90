/**
 * Response items -> the canonical conversation: system/developer messages join the system text after
 * the instructions; consecutive assistant-side items (assistant messages, reasoning, function calls)
 * make one assistant turn; consecutive function_call_output items one tool turn. Used for this turn's
 * input when it is decoded, and again by the endpoint's steps (services/responses/prepare-turn.ts) once
 * item references are placed and the stored chain of `previous_response_id` is loaded.
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
import { invalidMessages } from '../../core/service-error.ts';
import { parseDataUrl } from '../shared/decode-parts.ts';
import type { DecodedResponsesRequest } from './decoded-request.ts';
import {
  REDACTED_REASONING_PREFIX,
  type InputContent,
  type InputImageContent,
  type InputTextContent,
  type ResponseItem,
} from './wire-types.ts';

/**
 * Reads the conversation of `decoded` into `request.messages` and `request.system` (and the image
 * param): the items of the stored chain (`history`, every earlier turn's input then output items, oldest
 * first, as `services/responses` loads them; null when there is none) followed by this turn's input.
 * Earlier turns' `instructions` are not part of `history` and are not carried over
 * (docs/wire-contracts.md "previous_response_id"); their system/developer input messages are.
 * Throws 400 `invalid_messages` when a function_call_output answers no function_call, or a call is left
 * unanswered; without a history, that check waits while `previous_response_id` is still to be loaded.
 */
export function readConversation(decoded: DecodedResponsesRequest, history: readonly ResponseItem[] | null): void {
  const input = decoded.input.map((item, index): PlacedItem => ({ item, param: `input[${index}]` }));
  const conversation =
    history === null
      ? buildConversation(input, decoded.options.instructionsText, decoded.options.previousResponseId === null)
      : buildConversation(
          [...history.map((item): PlacedItem => ({ item, param: null })), ...input],
          decoded.options.instructionsText,
          true,
        );
  decoded.request.messages = conversation.messages;
  if (conversation.system !== undefined) decoded.request.system = conversation.system;
  else if (decoded.request.system !== undefined) delete decoded.request.system;
  decoded.options.imageParam = firstImageParam(decoded.input);
}

/** Path of the first image of this turn's input (`input[1].content[0]`), to blame when the model lacks vision. */
export function firstImageParam(input: readonly ResponseItem[]): string | null {
  for (const [index, item] of input.entries()) {
    if (item.type === 'message' && item.role !== 'assistant') {
      const partIndex = item.content.findIndex((part) => part.type === 'input_image');
      if (partIndex >= 0) return `input[${index}].content[${partIndex}]`;
    } else if (item.type === 'function_call_output' && typeof item.output !== 'string') {
      const partIndex = item.output.findIndex((part) => part.type === 'input_image');
      if (partIndex >= 0) return `input[${index}].output[${partIndex}]`;
    }
  }
  return null;
}

export interface PlacedItem {
  item: ResponseItem;
  /** `input[i]` for this turn's items; null for items of the stored chain. */
  param: string | null;
}

export interface Conversation {
  system?: string;
  messages: Message[];
}

/**
 * Folds items into canonical messages: system/developer messages join the system text (after the
 * instructions); consecutive assistant-side items (assistant messages, reasoning, function calls) make
 * one assistant turn; consecutive function_call_output items make one tool turn. With `checkCalls`, every
 * function_call_output must answer an earlier, unanswered function_call, and every function call must be
 * answered before the next user or assistant turn and by the end.
 */
export function buildConversation(items: readonly PlacedItem[], instructionsText: string | null, checkCalls: boolean): Conversation {
  const systemTexts: string[] = instructionsText === null ? [] : [instructionsText];
  const messages: Message[] = [];
  const known = new Map<string, string>();
  const pending = new Map<string, string>();

  const requireAnswered = (param: string): void => {
    if (!checkCalls || pending.size === 0) return;
    const [callId, name] = [...pending][0]!;
    throw invalidMessages(
      param,
      `No function_call_output found for the function call '${callId}' (${name}). Every function_call must be answered by a function_call_output item (with its call_id) before the conversation goes on.`,
    );
  };
  const assistantTurn = (param: string): AssistantContentPart[] => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last.content;
    requireAnswered(param);
    const created: Message = { role: 'assistant', content: [] };
    messages.push(created);
    return created.content;
  };

  for (const { item, param } of items) {
    const where = param ?? 'previous_response_id';
    switch (item.type) {
      case 'message':
        if (item.role === 'assistant') {
          const parts = item.content.map((part): TextPart => ({
            type: 'text',
            text: part.type === 'output_text' ? part.text : part.refusal,
          }));
          if (parts.length > 0) assistantTurn(where).push(...parts);
        } else if (item.role === 'user') {
          requireAnswered(where);
          messages.push({ role: 'user', content: item.content.map(toUserPart) });
        } else {
          systemTexts.push(item.content.map((part) => (part.type === 'input_text' ? part.text : '')).join('\n'));
        }
        break;
      case 'reasoning': {
        const text = item.content.map((part) => part.text).join('');
        const reasoning: AssistantContentPart = { type: 'reasoning', text };
        if (item.encrypted_content !== null && item.encrypted_content.startsWith(REDACTED_REASONING_PREFIX)) {
          reasoning.redactedData = item.encrypted_content.slice(REDACTED_REASONING_PREFIX.length);
        } else if (item.encrypted_content !== null && item.encrypted_content.length > 0) {
          reasoning.signature = item.encrypted_content;
        }
        // A reasoning item with neither text nor backend data says nothing a backend could use.
        if (text.length > 0 || reasoning.signature !== undefined || reasoning.redactedData !== undefined)
          assistantTurn(where).push(reasoning);
        break;
      }
      case 'function_call':
        if (checkCalls && known.has(item.call_id)) {
          const callParam = param === null ? where : `${param}.call_id`;
          throw invalidMessages(callParam, `Invalid '${callParam}': the call id '${item.call_id}' is used by two function calls.`);
        }
        assistantTurn(where).push({ type: 'tool-call', id: item.call_id, name: item.name, input: item.arguments });
        known.set(item.call_id, item.name);
        pending.set(item.call_id, item.name);
        break;
      case 'function_call_output': {
        const callParam = param === null ? where : `${param}.call_id`;
        if (checkCalls && !pending.has(item.call_id)) {
          throw invalidMessages(
            callParam,
            known.has(item.call_id)
              ? `Invalid '${callParam}': the function call '${item.call_id}' was already answered.`
              : `Invalid '${callParam}': '${item.call_id}' does not match the call_id of any function_call earlier in the conversation.`,
          );
        }
        pending.delete(item.call_id);
        const result: ToolResultPart = {
          type: 'tool-result',
          toolCallId: item.call_id,
          content: typeof item.output === 'string' ? item.output : item.output.map(toToolResultPart),
        };
        const toolName = known.get(item.call_id);
        if (toolName !== undefined) result.toolName = toolName;
        const last = messages.at(-1);
        if (last?.role === 'tool') last.content.push(result);
        else messages.push({ role: 'tool', content: [result] });
        break;
      }
    }
  }
  requireAnswered('input');
  if (messages.length === 0) {
    throw invalidMessages(
      'input',
      "Invalid 'input': the conversation must contain at least one user, assistant or function_call_output item besides system and developer messages.",
    );
  }
  const system = systemTexts.filter((text) => text.length > 0).join('\n\n');
  return system.length > 0 ? { system, messages } : { messages };
}

function toUserPart(part: InputContent): UserContentPart {
  switch (part.type) {
    case 'input_text':
      return { type: 'text', text: part.text };
    case 'input_image':
      return toImagePart(part);
    case 'input_file': {
      const document: DocumentPart = { type: 'document' };
      const url = part.file_data ?? part.file_url;
      if (url !== undefined) document.url = url;
      const mediaType = part.file_data === undefined ? undefined : parseDataUrl(part.file_data)?.mediaType;
      if (mediaType !== undefined) document.mediaType = mediaType;
      if (part.filename !== undefined) document.title = part.filename;
      return document;
    }
  }
}

function toImagePart(part: InputImageContent): ImagePart {
  const image: ImagePart = { type: 'image', url: part.image_url };
  const mediaType = parseDataUrl(part.image_url)?.mediaType;
  if (mediaType !== undefined) image.mediaType = mediaType;
  // The canonical hint has no `original`: it asks for full resolution, which `high` is closest to.
  image.detail = part.detail === 'original' ? 'high' : part.detail;
  return image;
}

function toToolResultPart(part: InputTextContent | InputImageContent): TextPart | ImagePart {
  return part.type === 'input_text' ? { type: 'text', text: part.text } : toImagePart(part);
}
