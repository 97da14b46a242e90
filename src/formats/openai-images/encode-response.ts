/**
 * Encodes generated images as the OpenAI `ImagesResponse` body: `{created, data: [{b64_json} | {url},
 * revised_prompt?]}`. The route decides how each image travels (inline base64, or a signed URL of our
 * own file store) and passes the result here. `_metadata` is added by the HTTP edge.
 */

export interface ImageDataObject {
  /** Base64 of the image file bytes (with `response_format: b64_json`). */
  b64_json?: string;
  /** Where to download the image (with `response_format: url`); served by this service. */
  url?: string;
  /** The prompt the backend actually used, when it rewrote it. */
  revised_prompt?: string;
}

export interface ImagesResponseBody {
  /** Unix time, seconds. */
  created: number;
  data: ImageDataObject[];
}

/** One image as the route delivers it: exactly one of `b64Json` and `url`. */
export type DeliveredImage = ({ b64Json: string; url?: never } | { url: string; b64Json?: never }) & { revisedPrompt?: string };

export function encodeImagesResponse(input: { images: DeliveredImage[]; created?: number }): ImagesResponseBody {
  return {
    created: input.created ?? Math.floor(Date.now() / 1000),
    data: input.images.map((image) => {
      const data: ImageDataObject = image.b64Json !== undefined ? { b64_json: image.b64Json } : { url: image.url! };
      if (image.revisedPrompt !== undefined) data.revised_prompt = image.revisedPrompt;
      return data;
    }),
  };
}
