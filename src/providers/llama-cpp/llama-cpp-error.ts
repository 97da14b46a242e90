/**
 * Errors of the in-process llama.cpp backend, in SPEC terms (docs/spec.md "Errors"). There is no upstream
 * HTTP status here: a GGUF that cannot be loaded is the operator's problem (500
 * `service_unavailable`, fallback-eligible so that a configured fallback model is tried), a request
 * asking for what this backend cannot do is the client's (400 naming the capability). Client messages
 * name the public model id, never the operator's file path: the path and the native error go to the log.
 */
import type { ServiceError } from '../../core/service-error.ts';
import { invalidParameter, serverError } from '../../core/service-error.ts';
import { UpstreamError } from '../../core/upstream-error.ts';

/** The GGUF file of `modelId` could not be read, parsed or loaded. Not retried (the file will not change), but a fallback may be tried. */
export function modelLoadError(modelId: string, cause: unknown): UpstreamError {
  return new UpstreamError({
    kind: 'connection',
    status: 500,
    type: 'server_error',
    code: 'service_unavailable',
    message: `The local model '${modelId}' could not be loaded. The operator must check its GGUF file (the server log names the file and the cause).`,
    upstreamStatus: null,
    retryable: false,
    retryAfterMs: null,
    cause,
  });
}

/** Generation failed inside llama.cpp after the model was loaded. */
export function generationError(modelId: string, cause: unknown): ServiceError {
  return serverError('internal_error', `The local model '${modelId}' failed while generating.`, cause);
}

/** 400 for a request feature this backend does not implement, naming the capability and where the request used it. */
export function unsupportedCapabilityError(modelId: string, param: string, capability: string): ServiceError {
  return invalidParameter(param, `The model '${modelId}' runs locally with llama.cpp, which does not support ${capability} in Switchyard.`);
}

/** 400 when the prompt alone fills the model's context window. */
export function contextOverflowError(modelId: string, promptTokens: number, contextTokens: number): ServiceError {
  return invalidParameter(
    'messages',
    `The prompt is ${promptTokens} tokens long, but the model '${modelId}' holds at most ${contextTokens} tokens per request ` +
      '(prompt and completion). Shorten the conversation.',
  );
}

/** 400 for a `response_format` JSON schema that cannot become a grammar. */
export function unsupportedSchemaError(modelId: string, detail: string): ServiceError {
  return invalidParameter('response_format', `The JSON schema cannot be enforced by the local model '${modelId}': ${detail}`);
}
