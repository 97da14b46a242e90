/**
 * An ImageModel over an OpenAI-compatible `/v1/images/generations` upstream (OpenAI, LocalAI and
 * similar), following the OpenAI API reference "Images > Create image": request
 * `{model, prompt, n, size, user?}`, response `{created, data: [{b64_json | url, revised_prompt?}]}`.
 *
 * No `response_format` is sent (gpt-image models refuse it and always answer base64). Whatever comes
 * back, the bytes are returned: `b64_json` is decoded, and a `url` result is downloaded at once (upstream
 * links expire within hours), so that the caller can store the image and serve it from its own URL.
 * The media type is read from the bytes (PNG, JPEG, WebP, GIF signatures), falling back to the
 * download's content-type and then to PNG.
 */
import { request as undiciRequest } from 'undici';
import type { CallOptions, GeneratedImage, ImageGenerationRequest, ImageModel } from '../../core/language-model.ts';
import { isServiceError } from '../../core/service-error.ts';
import { upstreamConnectionError, upstreamStatusError } from '../../core/upstream-error.ts';
import { headerValue } from '../shared/http-client.ts';
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
        let image: { bytes: Buffer; mediaType: string | undefined };
        if (base64 !== undefined) image = { bytes: Buffer.from(base64, 'base64'), mediaType: undefined };
        else if (url !== undefined) image = await this.download(url, options.signal);
        else throw upstreamConnectionError('the provider returned an image with neither b64_json nor url');
        if (image.bytes.length === 0) throw upstreamConnectionError('the provider returned an empty image');
        return {
          bytes: image.bytes,
          mediaType: sniffImageMediaType(image.bytes) ?? image.mediaType ?? 'image/png',
          ...(revisedPrompt === undefined ? {} : { revisedPrompt }),
        };
      }),
    );
  }

  /** Downloads a `url` result (http or https only, no redirects followed, at most MAX_IMAGE_BYTES). */
  private async download(url: string, signal: Cancellation): Promise<{ bytes: Buffer; mediaType: string | undefined }> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw upstreamConnectionError('the provider returned an image URL that is not valid');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw upstreamConnectionError('the provider returned an image URL that is not http(s)');
    }
    const secrets = (message: string): string => this.client.sanitize(message.split(url).join('[url]'));
    try {
      const response = await undiciRequest(parsed, {
        method: 'GET',
        signal: abortSignalOf(signal),
        headersTimeout: this.client.timeoutMs,
        bodyTimeout: this.client.timeoutMs,
      });
      if (response.statusCode < 200 || response.statusCode >= 300) {
        await response.body.dump();
        // A link that fails is the upstream's failure, never the caller's: report it as a 5xx.
        throw upstreamStatusError({
          upstreamStatus: response.statusCode >= 500 ? response.statusCode : 502,
          upstreamMessage: secrets(`downloading a generated image failed (HTTP ${response.statusCode})`),
        });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        size += buffer.length;
        if (size > MAX_IMAGE_BYTES) {
          response.body.destroy();
          throw upstreamConnectionError(`a generated image is larger than ${MAX_IMAGE_BYTES} bytes`);
        }
        chunks.push(buffer);
      }
      return { bytes: Buffer.concat(chunks), mediaType: headerValue(response.headers, 'content-type')?.split(';')[0]?.trim() };
    } catch (error) {
      if (isServiceError(error) || signal.aborted) throw signal.aborted ? signal.reason : error;
      throw this.client.transportError(error, signal);
    }
  }
}
