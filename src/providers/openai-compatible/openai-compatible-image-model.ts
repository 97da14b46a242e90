/**
 * An ImageModel over an OpenAI-compatible `/v1/images/generations` upstream (OpenAI, LocalAI and
 * similar), following the OpenAI API reference "Images > Create image": request
 * `{model, prompt, n, size, quality?, user?}`, response `{created, data: [{b64_json | url, revised_prompt?}]}`.
 *
 * No `response_format` is sent (gpt-image models refuse it and always answer base64). Whatever comes
 * back, the bytes are returned: `b64_json` is decoded, and a `url` result is downloaded at once (upstream
 * links expire within hours), so that the caller can store the image and serve it from its own URL.
 * The download is guarded (providers/shared/guarded-download.ts): public addresses only, checked after
 * DNS resolution, redirects bounded and re-checked (unless the provider's `allowPrivateImageUrls`), and
 * only bytes with an image signature (PNG, JPEG, WebP, GIF) are kept: an upstream cannot make
 * Switchyard read its internal services and hand their answers to callers. The media type is read from
 * the bytes (a `b64_json` result of unknown signature is stored as PNG, as before).
 */
import type { CallOptions, GeneratedImage, ImageGenerationRequest, ImageModel } from '../../core/language-model.ts';
import { isServiceError } from '../../core/service-error.ts';
import { upstreamConnectionError, upstreamStatusError } from '../../core/upstream-error.ts';
import { guardedDownload, GuardedDownloadError } from '../shared/guarded-download.ts';
import type { UpstreamHttpClient } from '../shared/http-client.ts';
import { asArray, asObject, asString } from '../shared/lenient-json.ts';
import { postOpenAICompatibleJson } from './openai-compatible-embedding-model.ts';
import { abortSignalOf, type Cancellation } from '../../core/cancellation.ts';

/** Largest image downloaded from a `url` result, bytes. */
const MAX_IMAGE_BYTES = 50 * 1024 * 1024;

export interface OpenAICompatibleImageSettings {
  /** Model name sent upstream (e.g. `dall-e-3`, `gpt-image-1`). */
  upstreamModel: string;
  /** Headers sent with every request (authorization and the provider's configured headers). */
  headers: Record<string, string>;
  /** Download `url` results from any address, private networks included (default: public addresses only). */
  allowPrivateAddresses?: boolean;
}

/** The media type of image bytes by their signature, or undefined when unknown. */
export function sniffImageMediaType(bytes: Buffer): string | undefined {
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  if (bytes.length >= 6 && bytes.toString('latin1', 0, 3) === 'GIF') return 'image/gif';
  return undefined;
}

export class OpenAICompatibleImageModel implements ImageModel {
  readonly honoursQuality = true;

  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly settings: OpenAICompatibleImageSettings,
  ) {}

  async generate(request: ImageGenerationRequest, options: CallOptions): Promise<GeneratedImage[]> {
    const payload: Record<string, unknown> = {
      model: this.settings.upstreamModel,
      prompt: request.prompt,
      n: request.n,
      size: request.size,
    };
    if (request.quality !== undefined) payload['quality'] = request.quality;
    if (request.user !== undefined) payload['user'] = request.user;
    const body = asObject(await postOpenAICompatibleJson(this.client, '/images/generations', payload, this.settings.headers, options));
    const data = asArray(body?.['data']) ?? [];
    if (data.length === 0) throw upstreamConnectionError('the provider returned no images');
    return Promise.all(
      data.map(async (value) => {
        const item = asObject(value);
        const base64 = asString(item?.['b64_json']);
        const url = asString(item?.['url']);
        const revisedPrompt = asString(item?.['revised_prompt']);
        let image: { bytes: Buffer; mediaType: string };
        if (base64 !== undefined) {
          const bytes = Buffer.from(base64, 'base64');
          image = { bytes, mediaType: sniffImageMediaType(bytes) ?? 'image/png' };
        } else if (url !== undefined) image = await this.download(url, options.signal);
        else throw upstreamConnectionError('the provider returned an image with neither b64_json nor url');
        if (image.bytes.length === 0) throw upstreamConnectionError('the provider returned an empty image');
        return {
          bytes: image.bytes,
          mediaType: image.mediaType,
          ...(revisedPrompt === undefined ? {} : { revisedPrompt }),
        };
      }),
    );
  }

  /**
   * Downloads a `url` result (guarded-download.ts: http(s), public addresses unless allowed, at most 3
   * redirects, at most MAX_IMAGE_BYTES) and keeps it only when its bytes are an image.
   */
  private async download(url: string, signal: Cancellation): Promise<{ bytes: Buffer; mediaType: string }> {
    const secrets = (message: string): string => this.client.sanitize(message.split(url).join('[url]'));
    try {
      const downloaded = await guardedDownload(url, {
        signal: abortSignalOf(signal),
        timeoutMs: this.client.timeoutMs,
        maxBytes: MAX_IMAGE_BYTES,
        ...(this.settings.allowPrivateAddresses === true ? { allowAddress: () => true } : {}),
      });
      const mediaType = sniffImageMediaType(downloaded.bytes);
      if (mediaType === undefined) {
        throw upstreamConnectionError(
          `the provider's image URL answered ${downloaded.contentType ?? 'bytes of no type'}, not a PNG, JPEG, WebP or GIF image`,
        );
      }
      return { bytes: downloaded.bytes, mediaType };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (isServiceError(error)) throw error;
      if (error instanceof GuardedDownloadError) {
        // A link that fails or is refused is the upstream's failure, never the caller's: a 5xx.
        if (error.status !== undefined) {
          throw upstreamStatusError({
            upstreamStatus: error.status >= 500 ? error.status : 502,
            upstreamMessage: secrets(`downloading a generated image failed (HTTP ${error.status})`),
          });
        }
        throw upstreamConnectionError(`the provider returned an image URL that was not fetched: ${error.message}`);
      }
      throw this.client.transportError(error, signal);
    }
  }
}
