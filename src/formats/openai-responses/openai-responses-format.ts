/**
 * The response-style format as one value (core/generation-format.ts): decode-request.ts,
 * encode-response.ts and encode-stream.ts behind the contract every generation route serves. Stored
 * conversations (`previous_response_id`, `store`) are the endpoint's own steps, outside the format.
 */
import { jsonBody, type GenerationFormat } from '../../core/generation-format.ts';
import { decodeResponsesRequest, type DecodedResponsesRequest } from './decode-request.ts';
import { createResponseContext, encodeResponse, type ResponseContext } from './encode-response.ts';
import { encodeResponseStream } from './encode-stream.ts';
import type { ResponseObject } from './wire-types.ts';

/** Warning sent when the client used `max_tokens` (RFC 9111 `Warning: 299`, plus `Deprecation`). */
export const MAX_TOKENS_DEPRECATION_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  deprecation: 'true',
  warning: `299 switchyard "'max_tokens' is deprecated on /v1/responses; send 'max_output_tokens' instead."`,
});

export interface ResponsesFormatContext {
  /** The whole decoded request: this turn's input items and the options the endpoint's steps need. */
  decoded: DecodedResponsesRequest;
  response: ResponseContext;
}

export const openAIResponsesFormat: GenerationFormat<ResponsesFormatContext> = {
  name: 'openai-responses',
  settingNames: {
    temperature: 'temperature',
    topP: 'top_p',
    topK: 'top_k',
    maxOutputTokens: 'max_output_tokens',
    stopSequences: 'stop',
    seed: 'seed',
    metadata: 'metadata',
    user: 'user',
    parallelToolCalls: 'parallel_tool_calls',
    reasoningEffort: 'reasoning.effort',
    thinking: 'reasoning.effort',
    responseFormat: 'text.format',
    toolChoice: 'tool_choice',
  },
  decode(body, decodeOptions) {
    const decoded = decodeResponsesRequest(body, decodeOptions);
    const { options } = decoded;
    return {
      request: decoded.request,
      stream: options.stream,
      capabilityParams: {
        function_calling: 'tools',
        json_mode: 'text.format',
        thinking: 'reasoning.effort',
        streaming: 'stream',
        ...(options.imageParam === null ? {} : { vision: options.imageParam }),
      },
      ignoredParameters: options.ignoredParameters,
      headers: options.usedDeprecatedMaxTokens ? { ...MAX_TOKENS_DEPRECATION_HEADERS } : {},
      context: { decoded, response: createResponseContext(options) },
    };
  },
  encodeResponse: (result, context) => jsonBody(encodeResponse(result, context.response)),
  encodeStream: (parts, context, started) => {
    const onFinal = started.onFinal;
    return encodeResponseStream(
      parts,
      context.response,
      onFinal === undefined ? {} : { onFinal: (response: ResponseObject) => onFinal({ ...response }) },
    );
  },
};
