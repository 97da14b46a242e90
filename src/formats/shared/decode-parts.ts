/**
 * The content-part rules every generation format shares: what an image URL, inline file data, an
 * http(s) URL and raw base64 data must look like. One rule each; the format passes its wording table
 * (request-fields.ts `FieldWording`), which words the message and picks the code (`invalid_parameter`
 * for the OpenAI-style formats, `invalid_format` for Messages, as each format's tests pin).
 */
import type { ImagePart } from '../../core/generation.ts';
import { invalidParameter } from '../../core/service-error.ts';
import { malformedValue, requiredString, type FieldWording, type JsonObject } from './request-fields.ts';

const BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/;

/** `data:<mediaType>[;params];base64,<data>` -> media type; undefined when not a base64 data URL. */
export function parseDataUrl(url: string): { mediaType: string } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0) return undefined;
  const header = url.slice(5, comma).split(';');
  if (!header.includes('base64')) return undefined;
  const mediaType = (header[0] ?? '').trim().toLowerCase();
  if (!/^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(mediaType)) return undefined;
  if (comma === url.length - 1) return undefined;
  return { mediaType };
}

export function isHttpUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const protocol = new URL(url).protocol;
  return protocol === 'http:' || protocol === 'https:';
}

/**
 * The image URL rule: an http(s) URL, or a base64 image data URL (`data:image/<type>[;params];base64,<data>`
 * with non-empty base64 data). Returns the canonical image part (with the data URL's media type).
 */
export function decodeImageUrl(url: string, param: string, wording: FieldWording): ImagePart {
  if (url.startsWith('data:')) {
    const dataUrl = parseDataUrl(url);
    if (dataUrl === undefined || !dataUrl.mediaType.startsWith('image/') || !BASE64_PATTERN.test(url.slice(url.indexOf(',') + 1))) {
      throw malformedValue(param, wording.badImageDataUrl(param), wording);
    }
    return { type: 'image', url, mediaType: dataUrl.mediaType };
  }
  if (!isHttpUrl(url)) throw malformedValue(param, wording.badImageUrl(param), wording);
  return { type: 'image', url };
}

/** The inline file rule: a base64 data URL of any media type. Returns the media type. */
export function decodeFileData(data: string, param: string, wording: FieldWording): string {
  const dataUrl = parseDataUrl(data);
  if (dataUrl === undefined) throw malformedValue(param, wording.badFileData(param), wording);
  return dataUrl.mediaType;
}

/** A URL that must be http(s): file and document URLs, Anthropic `url` sources. */
export function decodeHttpUrl(url: string, param: string, wording: FieldWording): string {
  if (!isHttpUrl(url)) throw malformedValue(param, wording.badHttpUrl(param), wording);
  return url;
}

/** `owner[key]`: required, non-empty raw base64 data (Anthropic `source.data`, without a `data:` prefix). */
export function requiredBase64(owner: JsonObject, key: string, param: string, wording: FieldWording): string {
  const data = requiredString(owner, key, param, wording);
  if (data === '') throw invalidParameter(param, `'${param}' must not be empty.`);
  if (!BASE64_PATTERN.test(data)) throw malformedValue(param, wording.badBase64(param), wording);
  return data;
}

/**
 * Parts by stored file id are refused everywhere (ids of this service's file store are not resolvable
 * inside a message): the 400 names `<param>.file_id` when the part carries one, else undefined.
 */
export function refuseFileId(part: JsonObject, param: string, message: string): void {
  if (part['file_id'] !== undefined && part['file_id'] !== null)
    throw invalidParameter(`${param}.file_id`, `Invalid '${param}.file_id': ${message}`);
}
