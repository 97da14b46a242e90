/**
 * One text-generation request from body to answer, for any client format: decode (the format value),
 * start the metered generation (metered-generations.ts), then encode as one JSON body or as events.
 * The HTTP route and the batch worker both call it, so a batch line is answered exactly as the same
 * request made synchronously (at the batch price).
 */
import type { Capability, ModelConfig, Permission } from '../../config/index.ts';
import { assembleResult, assembleWholeResult } from '../../core/assemble-result.ts';
import type { DecodedGeneration, GenerationFormat, StartedGeneration } from '../../core/generation-format.ts';
import type { GenerationWarning } from '../../core/generation.ts';
import { invalidParameter } from '../../core/service-error.ts';
import type { EventsAnswer, JsonAnswer } from '../answer.ts';
import type { Caller } from '../caller.ts';
import type { MeteredGenerationOptions, MeteredGenerations } from './metered-generations.ts';
import { addCacheHeaders } from '../cache/cache-headers.ts';
import { directivesOf } from '../cache/cache-policy.ts';

/** Response header listing valid request parameters this service did not honour (comma-separated wire names). */
export const IGNORED_PARAMETERS_HEADER = 'x-switchyard-ignored-parameters';

/** Response header naming the deployment that answered (its provider id; `#n` for a provider's n-th key). */
export const DEPLOYMENT_HEADER = 'x-switchyard-deployment';

/** A generation endpoint: its path, who may call it, its wire format and the endpoint's own steps. */
export interface GenerationEndpoint<Context = unknown> {
  /** Request path, e.g. `/v1/messages`; also the ledger's endpoint column. */
  path: string;
  permission: Permission;
  /** One line for the OpenAPI description. */
  summary: string;
  format: GenerationFormat<Context>;
  /** Completes the decoded request once the model is known (before capabilities and limits are checked). */
  prepare?(decoded: DecodedGeneration<Context>, caller: Caller, model: ModelConfig): Promise<void> | void;
  /** Called with the final answer body before the client sees its end (e.g. to store it); undefined: nothing to do. */
  onFinal?(decoded: DecodedGeneration<Context>, caller: Caller): ((body: Record<string, unknown>) => Promise<void>) | undefined;
}

/** A generation's answer, with the parameters that were not honoured (for a log line). */
export type GenerationAnswer = (JsonAnswer | EventsAnswer) & {
  /** Wire names of parameters that were not honoured (by the decoder or the backend). */
  ignoredParameters: string[];
};

function ignoredParameters(
  decoded: DecodedGeneration<unknown>,
  warnings: readonly GenerationWarning[],
  format: GenerationFormat<unknown>,
): string[] {
  if (warnings.length === 0) return decoded.ignoredParameters;
  const names = new Set(decoded.ignoredParameters);
  for (const warning of warnings) names.add(format.settingNames[warning.setting]);
  return [...names];
}

export async function runGenerationEndpoint<Context>(
  endpoint: GenerationEndpoint<Context>,
  caller: Caller,
  body: unknown,
  generations: MeteredGenerations,
  options: { allowStream?: boolean } = {},
): Promise<GenerationAnswer> {
  const { format } = endpoint;
  const decoded = format.decode(body, generations.decodeOptions);
  if (decoded.stream && options.allowStream === false)
    throw invalidParameter('stream', "Invalid 'stream': batch requests cannot stream; leave 'stream' out or set it to false.");
  // Objects here are built field by field: spreads of conditional parts take V8's slow path, and this
  // runs for every generation request.
  const startOptions: MeteredGenerationOptions = { endpoint: endpoint.path, capabilityParams: decoded.capabilityParams };
  if (decoded.stream) startOptions.capabilities = STREAMING;
  else startOptions.preferWholeResponse = true;
  // The response cache sees the body as sent (its key covers every answer-changing field) and the directives.
  if (typeof body === 'object' && body !== null && !Array.isArray(body))
    startOptions.cache = { body: body as Record<string, unknown>, directives: directivesOf(caller.cacheControl, body) };
  const prepare = endpoint.prepare;
  if (prepare !== undefined) startOptions.prepare = (model: ModelConfig) => prepare.call(endpoint, decoded, caller, model);
  const started = await generations.start(caller, decoded.request, startOptions);
  const ignored = ignoredParameters(decoded as DecodedGeneration<unknown>, started.warnings, format as GenerationFormat<unknown>);
  const headers = { ...decoded.headers, ...started.admission.headers };
  if (ignored.length > 0) headers[IGNORED_PARAMETERS_HEADER] = ignored.join(', ');
  if (started.deployment !== '') headers[DEPLOYMENT_HEADER] = started.deployment;
  const cache = started.cache;
  if (cache !== undefined) addCacheHeaders(headers, cache);
  const onFinal = endpoint.onFinal?.(decoded, caller);
  if (decoded.stream) {
    const streamStart: StartedGeneration = { promptTokens: started.promptTokens };
    if (onFinal !== undefined) streamStart.onFinal = onFinal;
    const events = format.encodeStream(started.parts, decoded.context, streamStart);
    const streamed: GenerationAnswer = { headers, ignoredParameters: ignored, admission: started.admission, stream: true, events };
    if (cache !== undefined) streamed.cache = cache.status;
    if (format.keepAlive !== undefined) streamed.keepAlive = format.keepAlive;
    return streamed;
  }
  // A backend that answered whole was settled by the attempt: its parts are folded with no stream in between.
  const whole = started.whole;
  const result = whole === undefined ? await assembleResult(started.parts) : assembleWholeResult(await whole.take());
  const answer = format.encodeResponse(result, decoded.context);
  await onFinal?.(answer);
  const json: GenerationAnswer = { headers, ignoredParameters: ignored, admission: started.admission, stream: false, body: answer };
  if (cache !== undefined) json.cache = cache.status;
  return json;
}

const STREAMING: readonly Capability[] = ['streaming'];
