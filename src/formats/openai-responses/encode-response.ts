/**
 * Encodes canonical results as the SPEC "Response object" (without `_metadata`, which the edge adds).
 *
 * Wire document: docs/spec.md "Response object" (field list and order, `resp_` + 48 hex ids, statuses, usage
 * with its details objects) and docs/wire-contracts.md "Responses" (message items `msg_...` with
 * `output_text` parts and empty `annotations`, function call items `fc_...` with `call_id`). Reasoning
 * items follow the OpenAI OpenAPI `ReasoningItem` (`rs_...`, `summary`, `content` of `reasoning_text`,
 * `encrypted_content`).
 *
 * Each canonical block becomes one output item, in the order the blocks started, so the non-streaming
 * output and the streamed items (encode-stream.ts) are built from the same helpers and agree.
 */
import type { GenerationResult } from '../../core/assemble-result.ts';
import type { AssistantContentPart } from '../../core/generation.ts';
import { newId } from '../../core/ids.ts';
import type { ServiceError } from '../../core/service-error.ts';
import type { ResponsesRequestOptions } from './decode-request.ts';
import { mapFinishReason } from './map-finish-reason.ts';
import { encodeUsage } from './map-usage.ts';
import {
  REDACTED_REASONING_PREFIX,
  type FunctionCallItem,
  type ItemStatus,
  type OutputMessageItem,
  type ReasoningItem,
  type ResponseEcho,
  type IncompleteDetails,
  type ResponseErrorObject,
  type ResponseStatus,
  type ResponseUsage,
  type ResponseObject,
  type ResponseOutputItem,
} from './wire-types.ts';

/** What every encoding of one response shares. */
export interface ResponseContext {
  /** `resp_` + 48 hex, the same in every stream event and in the store. */
  id: string;
  /** Creation time, Unix seconds. */
  createdAt: number;
  /** Model name echoed to the client (the `model` it sent). */
  model: string;
  /** The request fields the Response object echoes. */
  echo: ResponseEcho;
}

/** A fresh context for a decoded request: new `resp_` id, created_at = now in Unix seconds. */
export function createResponseContext(options: Pick<ResponsesRequestOptions, 'model' | 'echo'>): ResponseContext {
  return { id: newId.response(), createdAt: Math.floor(Date.now() / 1000), model: options.model, echo: options.echo };
}

/**
 * A ServiceError -> the `error` of a failed response. `code` uses OpenAI's response error codes (which
 * the SDK types list): 429 -> `rate_limit_exceeded`, other 4xx -> `invalid_prompt`, else `server_error`;
 * `type` keeps the SPEC error type.
 */
export function encodeResponseError(error: ServiceError): ResponseErrorObject {
  const code = error.status === 429 ? 'rate_limit_exceeded' : error.status >= 400 && error.status < 500 ? 'invalid_prompt' : 'server_error';
  return { code, message: error.message, type: error.type, param: error.param };
}

export function messageItem(id: string, text: string, status: ItemStatus): OutputMessageItem {
  return { id, type: 'message', role: 'assistant', status, content: [{ type: 'output_text', text, annotations: [] }] };
}

export function functionCallItem(id: string, callId: string, name: string, argumentsText: string, status: ItemStatus): FunctionCallItem {
  return { id, type: 'function_call', call_id: callId, name, arguments: argumentsText, status };
}

/** The `encrypted_content` of a reasoning block: its signature, or its redacted data, or null. */
export function reasoningEncryptedContent(part: { signature?: string | undefined; redactedData?: string | undefined }): string | null {
  if (part.redactedData !== undefined) return `${REDACTED_REASONING_PREFIX}${part.redactedData}`;
  return part.signature !== undefined && part.signature.length > 0 ? part.signature : null;
}

/** A reasoning item. Redacted reasoning (its `encrypted_content` says so) has no readable content part. */
export function reasoningItem(id: string, text: string, encryptedContent: string | null, status: ItemStatus): ReasoningItem {
  const redacted = encryptedContent !== null && encryptedContent.startsWith(REDACTED_REASONING_PREFIX);
  return {
    id,
    type: 'reasoning',
    summary: [],
    content: redacted ? [] : [{ type: 'reasoning_text', text }],
    encrypted_content: encryptedContent,
    status,
  };
}

/** One canonical content part -> one output item with a new id. */
export function outputItemFor(part: AssistantContentPart, status: ItemStatus): ResponseOutputItem {
  switch (part.type) {
    case 'text':
      return messageItem(newId.responseMessageItem(), part.text, status);
    case 'reasoning':
      return reasoningItem(newId.responseReasoningItem(), part.text, reasoningEncryptedContent(part), status);
    case 'tool-call':
      return functionCallItem(newId.responseFunctionCallItem(), part.id, part.name, part.input, status);
  }
}

export interface ResponseFields {
  status: ResponseStatus;
  output: ResponseOutputItem[];
  usage: ResponseUsage | null;
  error?: ResponseErrorObject | null;
  incompleteDetails?: IncompleteDetails | null;
}

/** The SPEC Response object, field for field, in the SPEC's order. */
export function buildResponseObject(context: ResponseContext, fields: ResponseFields): ResponseObject {
  const { echo } = context;
  return {
    id: context.id,
    object: 'response',
    created_at: context.createdAt,
    status: fields.status,
    error: fields.error ?? null,
    incomplete_details: fields.incompleteDetails ?? null,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    model: context.model,
    output: fields.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: echo.previous_response_id,
    reasoning: echo.reasoning,
    store: echo.store,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: echo.truncation,
    usage: fields.usage,
    user: echo.user,
    metadata: echo.metadata,
  };
}

/**
 * GenerationResult -> Response object. When the response is incomplete (max_output_tokens or content
 * filter), the last output item, the one that was cut, has status `incomplete`.
 */
export function encodeResponse(result: GenerationResult, context: ResponseContext): ResponseObject {
  const ending = mapFinishReason(result.finishReason);
  const output = result.content.map((part, index) =>
    outputItemFor(part, ending.status !== 'completed' && index === result.content.length - 1 ? 'incomplete' : 'completed'),
  );
  return buildResponseObject(context, {
    status: ending.status,
    output,
    usage: encodeUsage(result.usage),
    error: ending.error,
    incompleteDetails: ending.incompleteDetails,
  });
}
