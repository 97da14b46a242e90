/**
 * POST /v1/images/generations: decode (formats/openai-images), resolve the model (named, or the first
 * catalogue model with `image_generation`), check the size against the model's `imageSizes`, generate,
 * and deliver each image as `b64_json` or as a signed, expiring link to our own file store (never the
 * upstream's link: providers hand back bytes). Counts against the request limit only (admitted by the
 * edge); recorded in the ledger with zero token usage.
 *
 * Warning header: accepted-but-not-honoured styling parameters (`quality`, `style`...) are listed in
 * `x-switchyard-ignored-parameters`, as the chat route does.
 */
import { startModelCallTrace } from '../services/trace-hooks.ts';
import { spanUntil } from '../telemetry/trace-types.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Capability, Config, ModelConfig } from '../config/index.ts';
import type { GeneratedImage, ImageModel } from '../core/language-model.ts';
import { isServiceError } from '../core/service-error.ts';
import { emptyUsage } from '../core/usage.ts';
import { decodeImageGenerationRequest, resolveImageSize } from '../formats/openai-images/decode-request.ts';
import { encodeImagesResponse, type DeliveredImage } from '../formats/openai-images/encode-response.ts';
import { ledgerContextOf } from '../services/caller.ts';
import { callerOf, defaultModelWith } from './metering-context.ts';

/** Response header listing valid request parameters this service did not honour (same as the chat route's). */
const IGNORED_PARAMETERS_HEADER = 'x-switchyard-ignored-parameters';
/** How long a `url` result can be fetched, seconds (OpenAI's links last 60 minutes). */
export const IMAGE_URL_TTL_SECONDS = 3600;

/** The part of the file service the route uses (services/files/file-service.ts FileService). */
export interface ImageFileStore {
  /** Stores image bytes for an organization; resolves to the file id. */
  storeImage(bytes: Uint8Array, mediaType: string, organizationId: string): Promise<string>;
  /** A link anyone can fetch without a key for `ttlSeconds`. `origin` is scheme, host and port. */
  signedFileUrl(origin: string, fileId: string, ttlSeconds: number): string;
}

export interface ImageRouteDependencies {
  /** The catalogue: the default model is its first model with the `image_generation` capability. */
  config: Pick<Config, 'models' | 'providers'>;
  /** Model lookup by id or alias with a capability check (GenerationService.resolve). */
  models: { resolve(modelName: string, needs?: readonly Capability[], param?: string): { model: ModelConfig } };
  /** Backends (ProviderRegistry). */
  registry: { imageModel(model: ModelConfig): ImageModel };
  /** Where `url` results are stored and signed. */
  files: ImageFileStore;
}

async function deliver(
  request: FastifyRequest,
  images: GeneratedImage[],
  format: 'url' | 'b64_json',
  files: ImageFileStore,
): Promise<DeliveredImage[]> {
  return Promise.all(
    images.map(async (image): Promise<DeliveredImage> => {
      const revised = image.revisedPrompt === undefined ? {} : { revisedPrompt: image.revisedPrompt };
      if (format === 'b64_json') return { b64Json: image.bytes.toString('base64'), ...revised };
      const fileId = await files.storeImage(image.bytes, image.mediaType, request.auth!.organizationId);
      return { url: files.signedFileUrl(request.publicOrigin(), fileId, IMAGE_URL_TTL_SECONDS), ...revised };
    }),
  );
}

export function registerImageRoutes(app: FastifyInstance, dependencies: ImageRouteDependencies): void {
  app.post(
    '/v1/images/generations',
    { config: { switchyard: { permission: 'images', summary: 'Generate images from a text prompt (PNG, as base64 or a signed link).' } } },
    async (request, reply) => {
      const decoded = decodeImageGenerationRequest(request.body);
      const { model } = dependencies.models.resolve(
        decoded.model ?? defaultModelWith(dependencies.config.models, 'image_generation', 'image'),
        ['image_generation'],
      );
      const size = resolveImageSize(decoded.size, model.imageSizes ?? []);
      if (decoded.ignoredParameters.length > 0) {
        request.extraHeaders = { ...request.extraHeaders, [IGNORED_PARAMETERS_HEADER]: decoded.ignoredParameters.join(', ') };
        request.log.warn({ ignoredParameters: decoded.ignoredParameters }, 'request parameters not honoured');
      }
      const ledger = ledgerContextOf(callerOf(request), model, '/v1/images/generations');
      let delivered: DeliveredImage[];
      const call =
        request.trace === undefined
          ? undefined
          : startModelCallTrace(request.trace, 'generate_content', model, dependencies.config.providers[model.provider]);
      try {
        const options = { signal: request.clientSignal(), requestId: request.id, ...(call === undefined ? {} : { trace: call }) };
        const images = await spanUntil(
          call,
          dependencies.registry
            .imageModel(model)
            .generate(
              { prompt: decoded.prompt, n: decoded.n, size, ...(decoded.user === undefined ? {} : { user: decoded.user }) },
              options,
            ),
        );
        delivered = await deliver(request, images, decoded.responseFormat, dependencies.files);
      } catch (error) {
        await request.admission?.settle(undefined, ledger, isServiceError(error) ? error.status : 500);
        throw error;
      }
      await request.admission?.settle(emptyUsage(), ledger);
      return reply.sendData({ ...encodeImagesResponse({ images: delivered }) });
    },
  );
}
