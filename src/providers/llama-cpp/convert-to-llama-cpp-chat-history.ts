/**
 * Converts the canonical conversation into node-llama-cpp's chat history (node-llama-cpp 3.x,
 * `dist/types.d.ts`: `ChatHistoryItem` = system | user | model items). The chat wrapper resolved from
 * the GGUF's `tokenizer.chat_template` then renders it, so this file never formats prompts itself.
 *
 * - The system text becomes the first `system` item.
 * - Consecutive turns of one role are merged, because many chat templates reject non-alternating roles.
 * - Assistant reasoning is passed back as a closed `thought` segment; templates without thought
 *   support drop it.
 * - A conversation ending with an assistant turn is continued from that text (prefill), as the
 *   Messages API does; otherwise an empty model turn is appended for the model to write.
 * - Tool calls become node-llama-cpp function calls, each carrying the result that a later `tool` turn
 *   gave for its id (node-llama-cpp renders a call and its result together); the `tool` turns
 *   themselves add no item. A result that is JSON text is passed as the JSON value, so the template
 *   shows it as the tool wrote it.
 * - Images and documents other than text are rejected with a 400 naming the capability: this backend
 *   runs text-only GGUF models.
 */
import type { ChatHistoryItem, ChatModelResponse } from 'node-llama-cpp';
import type { AssistantContentPart, GenerationRequest, ToolResultPart, UserContentPart } from '../../core/generation.ts';
import { invalidMessages } from '../../core/service-error.ts';
import { unsupportedCapabilityError } from './llama-cpp-error.ts';

interface ToolResultEntry {
  part: ToolResultPart;
  /** Where the result is in the request, for error params. */
  param: string;
}

function userPartText(modelId: string, part: UserContentPart, param: string): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
      throw unsupportedCapabilityError(modelId, param, 'image input');
    case 'document':
      if (part.text === undefined) throw unsupportedCapabilityError(modelId, param, 'documents other than plain text');
      return part.title === undefined ? part.text : `${part.title}\n\n${part.text}`;
  }
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function toolResultValue(modelId: string, entry: ToolResultEntry): unknown {
  const { part } = entry;
  let text: string;
  if (typeof part.content === 'string') text = part.content;
  else {
    text = part.content
      .map((inner, index) => {
        if (inner.type === 'image') throw unsupportedCapabilityError(modelId, `${entry.param}.content[${index}]`, 'image input');
        return inner.text;
      })
      .join('\n\n');
  }
  const value = parseJsonOr(text);
  return part.isError === true ? { error: value } : value;
}

function assistantResponse(
  request: GenerationRequest,
  content: AssistantContentPart[],
  param: string,
  results: ReadonlyMap<string, ToolResultEntry>,
): ChatModelResponse['response'] {
  const modelId = request.model;
  const response: ChatModelResponse['response'] = [];
  content.forEach((part, index) => {
    switch (part.type) {
      case 'text':
        if (part.text !== '') response.push(part.text);
        break;
      case 'reasoning':
        if (part.text !== '') response.push({ type: 'segment', segmentType: 'thought', text: part.text, ended: true });
        break;
      case 'tool-call': {
        const params = parseJsonOr(part.input === '' ? '{}' : part.input);
        if (typeof params !== 'object' || params === null || Array.isArray(params)) {
          throw invalidMessages(`${param}[${index}]`, 'The arguments of a tool call must be a JSON object.');
        }
        const result = results.get(part.id);
        if (result === undefined) {
          throw invalidMessages(`${param}[${index}]`, `The tool call '${part.id}' has no tool result in the messages that follow it.`);
        }
        const description = request.tools?.find((tool) => tool.name === part.name)?.description;
        response.push({
          type: 'functionCall',
          name: part.name,
          params,
          result: toolResultValue(modelId, result),
          ...(description === undefined ? {} : { description }),
        });
        break;
      }
    }
  });
  return response;
}

/** Tool results by call id, checked against the calls the assistant turns made. */
function collectToolResults(request: GenerationRequest): Map<string, ToolResultEntry> {
  const callIds = new Set(
    request.messages.flatMap((message) =>
      message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.id] : [])) : [],
    ),
  );
  const results = new Map<string, ToolResultEntry>();
  request.messages.forEach((message, messageIndex) => {
    if (message.role !== 'tool') return;
    message.content.forEach((part, index) => {
      const param = `messages[${messageIndex}].content[${index}]`;
      if (!callIds.has(part.toolCallId)) {
        throw invalidMessages(`${param}.tool_call_id`, `No assistant tool call has the id '${part.toolCallId}' this tool result answers.`);
      }
      results.set(part.toolCallId, { part, param });
    });
  });
  return results;
}

/** The chat history to generate from; its last item is the model turn to write (or continue). */
export function convertToLlamaCppChatHistory(request: GenerationRequest): ChatHistoryItem[] {
  const modelId = request.model;
  const results = collectToolResults(request);
  const history: ChatHistoryItem[] = [];
  if (request.system !== undefined && request.system !== '') history.push({ type: 'system', text: request.system });
  request.messages.forEach((message, messageIndex) => {
    const param = `messages[${messageIndex}].content`;
    const previous = history.at(-1);
    switch (message.role) {
      case 'user': {
        const text = message.content.map((part, index) => userPartText(modelId, part, `${param}[${index}]`)).join('\n\n');
        if (previous?.type === 'user') previous.text = `${previous.text}\n\n${text}`;
        else history.push({ type: 'user', text });
        break;
      }
      case 'assistant': {
        const response = assistantResponse(request, message.content, param, results);
        if (previous?.type === 'model') previous.response.push(...response);
        else history.push({ type: 'model', response });
        break;
      }
      case 'tool':
        // Results travel with their calls (see assistantResponse).
        break;
    }
  });
  if (history.at(-1)?.type !== 'model') history.push({ type: 'model', response: [] });
  return history;
}
