/**
 * The chat completions format as one value (core/generation-format.ts): decode-request.ts,
 * encode-response.ts and encode-stream.ts behind the contract every generation route serves.
 */
import { jsonBody, type GenerationFormat } from '../../core/generation-format.ts';
import { decodeChatCompletionRequest } from './decode-request.ts';
import { createChatCompletionContext, encodeChatCompletion, type ChatCompletionContext } from './encode-response.ts';
import { encodeChatCompletionStream } from './encode-stream.ts';

export interface ChatFormatContext {
  completion: ChatCompletionContext;
  /** `stream_options.include_usage`. */
  includeUsage: boolean;
}

export const openAIChatFormat: GenerationFormat<ChatFormatContext> = {
  name: 'openai-chat',
  settingNames: {
    temperature: 'temperature',
    topP: 'top_p',
    topK: 'top_k',
    maxOutputTokens: 'max_completion_tokens',
    stopSequences: 'stop',
    seed: 'seed',
    metadata: 'metadata',
    user: 'user',
    parallelToolCalls: 'parallel_tool_calls',
    reasoningEffort: 'reasoning_effort',
    thinking: 'reasoning_effort',
    responseFormat: 'response_format',
    toolChoice: 'tool_choice',
  },
  decode(body, decodeOptions) {
    const { request, options } = decodeChatCompletionRequest(body, decodeOptions);
    return {
      request,
      stream: options.stream,
      capabilityParams: options.imageParam === undefined ? {} : { vision: options.imageParam },
      ignoredParameters: options.ignoredParameters,
      headers: {},
      context: { completion: createChatCompletionContext(options.model), includeUsage: options.includeUsage },
    };
  },
  encodeResponse: (result, context) => jsonBody(encodeChatCompletion(result, context.completion)),
  encodeStream: (parts, context) => encodeChatCompletionStream(parts, context.completion, { includeUsage: context.includeUsage }),
};
