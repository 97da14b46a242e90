/**
 * Resolve and start in one call, for tests of the generation service: what `MeteredGenerations.start`
 * does around metering (resolve, check the request's capabilities, `streamResolved`).
 */
import type { GenerationRequest } from '../../src/core/generation.ts';
import type { GenerationService, GenerationStream, GenerationStreamOptions } from '../../src/services/generation/generation-service.ts';

export async function streamOf(
  service: Pick<GenerationService, 'resolve' | 'checkRequest' | 'streamResolved'>,
  request: GenerationRequest,
  options: GenerationStreamOptions,
): Promise<GenerationStream> {
  return service.streamResolved(service.checkRequest(service.resolve(request.model), request, options), request, options);
}
