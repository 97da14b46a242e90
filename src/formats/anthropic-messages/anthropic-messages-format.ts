/**
 * The Messages format as one value (core/generation-format.ts): decode-request.ts,
 * encode-response.ts and encode-stream.ts behind the contract every generation route serves, with
 * Anthropic `ping` keep-alives and the Anthropic error body (a top-level `"type":"error"`).
 */
import { jsonBody, type GenerationFormat } from '../../core/generation-format.ts';
import { decodeMessagesRequest } from './decode-request.ts';
import { encodeMessagesResponse } from './encode-response.ts';
import { encodeMessagesStream, messagesPingEvent } from './encode-stream.ts';
import { withMessagesErrorType } from './error-envelope.ts';

export interface MessagesFormatContext {
  /** Anthropic echoes the model as the client spelled it (an alias stays an alias). */
  model: string;
}

export const anthropicMessagesFormat: GenerationFormat<MessagesFormatContext> = {
  name: 'anthropic-messages',
  settingNames: {
    temperature: 'temperature',
    topP: 'top_p',
    topK: 'top_k',
    maxOutputTokens: 'max_tokens',
    stopSequences: 'stop_sequences',
    seed: 'seed',
    metadata: 'metadata',
    user: 'metadata.user_id',
    parallelToolCalls: 'tool_choice.disable_parallel_tool_use',
    reasoningEffort: 'thinking',
    thinking: 'thinking',
    responseFormat: 'output_config',
    toolChoice: 'tool_choice',
  },
  decode(body, decodeOptions) {
    const decoded = decodeMessagesRequest(body, decodeOptions);
    return {
      request: decoded.request,
      stream: decoded.stream,
      capabilityParams: decoded.imageParam === undefined ? {} : { vision: decoded.imageParam },
      ignoredParameters: [],
      headers: {},
      context: { model: decoded.request.model },
    };
  },
  encodeResponse: (result, context) => jsonBody(encodeMessagesResponse(result, { model: context.model })),
  encodeStream: (parts, context, started) => encodeMessagesStream(parts, { model: context.model, inputTokens: started.promptTokens }),
  keepAlive: messagesPingEvent(),
  wrapErrorEnvelope: withMessagesErrorType,
};
