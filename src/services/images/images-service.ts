/**
 * The image-generation use case (POST /v1/images/generations): resolve the model (named, or the first
 * catalogue model with `image_generation`), check the size against the model's `imageSizes`, generate,
 * and deliver each image as `b64_json` or as a signed, expiring link to our own file store (never the
 * upstream's link: providers hand back bytes). Admitted as one request with no tokens; recorded in the
 * ledger as one request with its images (count and size), priced by the model's `perImage` prices.
 *
 * Warning header: accepted-but-not-honoured styling parameters (`style`..., and `quality` for a backend
 * that does not honour it) are listed in `x-switchyard-ignored-parameters`, as the generation endpoints do.
 */
import type { Config, ModelConfig } from '../../config/index.ts';
import type { GeneratedImage, ImageGenerationRequest, ImageModel } from '../../core/language-model.ts';
import { answeredUsage } from '../../core/usage.ts';
import { spanUntil } from '../../telemetry/trace-types.ts';
import type { JsonAnswer } from '../answer.ts';
import { ledgerContextOf, type Caller } from '../caller.ts';
import { IGNORED_PARAMETERS_HEADER } from '../generation/run-generation-endpoint.ts';
import { metered } from '../metering/metered.ts';
import type { MeteringService } from '../metering/metering-service.ts';
import { defaultModelWith, type ModelResolver } from '../model-lookup.ts';
import { startModelCallTrace } from '../trace-hooks.ts';

/** How long a `url` result can be fetched, seconds (OpenAI's links last 60 minutes). */
export const IMAGE_URL_TTL_SECONDS = 3600;

/** What the use case reads of a decoded request. */
export interface ImagesRequest {
  /** The model as the client named it, or null for the catalogue's first image model. */
  model: string | null;
  prompt: string;
  n: number;
  /** `WxH` as sent, or null for the model's preferred size. */
  size: string | null;
  responseFormat: 'url' | 'b64_json';
  /** `standard`, `hd`, `low`..., or `auto`; absent: the backend's default. */
  quality?: string;
  /** End-user identifier. */
  user?: string;
  /** Wire names of parameters accepted but not honoured, for the warning header. */
  ignoredParameters: string[];
}

/** An image as delivered: inline, or a signed link; the prompt the backend revised, if any. */
export type DeliveredImage = ({ b64Json: string; url?: never } | { url: string; b64Json?: never }) & { revisedPrompt?: string };

/** The endpoint's wire format (formats/openai-images), given by the composition root. */
export interface ImagesWire<Request extends ImagesRequest> {
  decode(body: unknown): Request;
  /** The size to generate: the requested one if the model offers it (else a 400), or its preferred one. */
  resolveSize(requested: string | null, allowedSizes: readonly string[]): string;
  encode(images: DeliveredImage[]): Record<string, unknown>;
}

/** The part of the file service the use case uses (services/files/file-service.ts FileService). */
export interface ImageFileStore {
  /** Stores image bytes for an organization; resolves to the file id. */
  storeImage(bytes: Uint8Array, mediaType: string, organizationId: string): Promise<string>;
  /** A link anyone can fetch without a key for `ttlSeconds`. `origin` is scheme, host and port. */
  signedFileUrl(origin: string, fileId: string, ttlSeconds: number): string;
}

export interface ImagesDependencies<Request extends ImagesRequest> {
  /** The catalogue: the default model is its first model with the `image_generation` capability. */
  config: Pick<Config, 'models' | 'providers'>;
  models: ModelResolver;
  /** Backends (ProviderRegistry). */
  registry: { imageModel(model: ModelConfig): ImageModel };
  /** Rate limits, quotas and the ledger. */
  metering: Pick<MeteringService, 'admit'>;
  /** Where `url` results are stored and signed. */
  files: ImageFileStore;
  wire: ImagesWire<Request>;
}

/** Where the caller reads links from: the origin of links sent to it (`request.publicOrigin()` over HTTP). */
export type PublicOrigin = () => string;

export class ImagesService<Request extends ImagesRequest = ImagesRequest> {
  constructor(private readonly dependencies: ImagesDependencies<Request>) {}

  async run(caller: Caller, body: unknown, publicOrigin: PublicOrigin): Promise<JsonAnswer & { ignoredParameters: string[] }> {
    const { wire, models, config } = this.dependencies;
    const decoded = wire.decode(body);
    const { model } = models.resolve(decoded.model ?? defaultModelWith(config.models, 'image_generation', 'image'), ['image_generation']);
    const size = wire.resolveSize(decoded.size, model.imageSizes ?? []);
    const ledger = ledgerContextOf(caller, model, '/v1/images/generations');
    let qualityHonoured = false;
    const { value: delivered, admission } = await metered(
      this.dependencies.metering,
      caller,
      0,
      ledger,
      async () => {
        const imageModel = this.dependencies.registry.imageModel(model);
        qualityHonoured = decoded.quality !== undefined && imageModel.honoursQuality === true;
        const quality = qualityHonoured ? decoded.quality : undefined;
        const images = await this.generate(caller, model, imageModel, { ...decoded, size, quality });
        // Priced per image by size and the quality generated at (price card `perImage`); `auto` names none.
        const generated = { count: images.length, size, ...(quality === undefined || quality === 'auto' ? {} : { quality }) };
        return {
          value: await this.deliver(caller, images, decoded.responseFormat, publicOrigin),
          usage: answeredUsage({ images: generated }),
        };
      },
      { promptTokens: 0, maxOutputTokens: 0, images: { count: decoded.n, ...(size === null ? {} : { size }) } },
    );
    const ignored =
      decoded.quality !== undefined && !qualityHonoured ? ['quality', ...decoded.ignoredParameters] : decoded.ignoredParameters;
    const headers = ignored.length === 0 ? admission.headers : { ...admission.headers, [IGNORED_PARAMETERS_HEADER]: ignored.join(', ') };
    return { stream: false, body: wire.encode(delivered), headers, admission, ignoredParameters: ignored };
  }

  private generate(
    caller: Caller,
    model: ModelConfig,
    imageModel: ImageModel,
    wanted: Pick<ImagesRequest, 'prompt' | 'n' | 'user'> & { size: string; quality: string | undefined },
  ): Promise<GeneratedImage[]> {
    const { config } = this.dependencies;
    const call =
      caller.trace === undefined
        ? undefined
        : startModelCallTrace(caller.trace, 'generate_content', model, config.providers[model.provider]);
    const options = { signal: caller.signal, requestId: caller.requestId, ...(call === undefined ? {} : { trace: call }) };
    const request: ImageGenerationRequest = { prompt: wanted.prompt, n: wanted.n, size: wanted.size };
    if (wanted.quality !== undefined) request.quality = wanted.quality;
    if (wanted.user !== undefined) request.user = wanted.user;
    return spanUntil(call, imageModel.generate(request, options));
  }

  private deliver(
    caller: Caller,
    images: GeneratedImage[],
    format: 'url' | 'b64_json',
    publicOrigin: PublicOrigin,
  ): Promise<DeliveredImage[]> {
    const { files } = this.dependencies;
    return Promise.all(
      images.map(async (image): Promise<DeliveredImage> => {
        const revised = image.revisedPrompt === undefined ? {} : { revisedPrompt: image.revisedPrompt };
        if (format === 'b64_json') return { b64Json: image.bytes.toString('base64'), ...revised };
        const fileId = await files.storeImage(image.bytes, image.mediaType, caller.auth.organizationId);
        return { url: files.signedFileUrl(publicOrigin(), fileId, IMAGE_URL_TTL_SECONDS), ...revised };
      }),
    );
  }
}
