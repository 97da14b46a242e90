/**
 * The text-generation endpoints: each is a client format value plus the endpoint's own steps. The HTTP
 * routes (generation-routes.ts) and the batch worker serve requests from this one table.
 */
import { anthropicMessagesFormat } from '../formats/anthropic-messages/anthropic-messages-format.ts';
import { openAIChatFormat } from '../formats/openai-chat/openai-chat-format.ts';
import { readConversation } from '../formats/openai-responses/decode-messages.ts';
import { openAIResponsesFormat, type ResponsesFormatContext } from '../formats/openai-responses/openai-responses-format.ts';
import type { ResponseItem, ResponseObject } from '../formats/openai-responses/wire-types.ts';
import type { GenerationEndpoint } from '../services/generation/run-generation-endpoint.ts';
import type { StoredResponses } from '../services/responses/stored-responses.ts';
import { prepareResponseTurn } from '../services/responses/prepare-turn.ts';

/** Stored conversations of the responses endpoint, in the wire shapes of that format. */
export type StoredResponseStore = StoredResponses<ResponseItem, ResponseObject>;

export const chatCompletionsEndpoint: GenerationEndpoint = {
  path: '/v1/chat/completions',
  permission: 'chat.completions',
  summary: 'Create a chat completion (JSON, or server-sent chunks with stream: true).',
  format: openAIChatFormat,
};

export const messagesEndpoint: GenerationEndpoint = {
  path: '/v1/messages',
  permission: 'messages',
  summary: 'Create a message (Anthropic Messages shape; server-sent events with stream: true).',
  format: anthropicMessagesFormat,
};

/**
 * `/v1/responses`: once the model is known, the endpoint's steps (services/responses/prepare-turn.ts: stored
 * items of `item_reference` inputs, the stored chain of `previous_response_id`, the thinking budget, the
 * context window); with `store: true` save the response with this turn's input before the client
 * sees its end, so a client that continues at once finds it.
 */
export function responsesEndpoint(store: StoredResponseStore): GenerationEndpoint {
  const endpoint: GenerationEndpoint<ResponsesFormatContext> = {
    path: '/v1/responses',
    permission: 'responses',
    summary: 'Create a response (JSON, or server-sent events with stream: true); store: true keeps the conversation.',
    format: openAIResponsesFormat,
    prepare(decoded, caller, model) {
      return prepareResponseTurn(decoded.context.decoded, { store, organizationId: caller.auth.organizationId, model, readConversation });
    },
    onFinal(decoded, caller) {
      const responses = decoded.context.decoded;
      if (!responses.options.store) return undefined;
      // The body is this format's Response object (openAIResponsesFormat encodes it).
      return (body) =>
        store.save({
          response: body as unknown as ResponseObject,
          inputItems: responses.input,
          organizationId: caller.auth.organizationId,
        });
    },
  };
  return endpoint;
}

/** Every generation endpoint, in route registration order. */
export function generationEndpoints(store: StoredResponseStore): GenerationEndpoint[] {
  return [chatCompletionsEndpoint, messagesEndpoint, responsesEndpoint(store)];
}
