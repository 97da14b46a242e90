/**
 * `data:` URLs (RFC 2397) as canonical image and document parts carry inline bytes:
 * `data:<media type>[;base64],<data>`.
 */

export interface ParsedDataUrl {
  /** Media type, `text/plain` when the URL names none (RFC 2397 default). */
  mediaType: string;
  /** The payload: base64 text when `base64` is true, otherwise percent-decoded text. */
  data: string;
  base64: boolean;
}

/** Parses a `data:` URL; undefined for anything else (http(s) URLs, malformed input). */
export function parseDataUrl(url: string): ParsedDataUrl | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma === -1) return undefined;
  const header = url.slice(5, comma);
  const parameters = header.split(';');
  const base64 = parameters.at(-1)?.toLowerCase() === 'base64';
  const mediaType = parameters[0]?.trim() || 'text/plain';
  const payload = url.slice(comma + 1);
  if (base64) return { mediaType, data: payload, base64 };
  try {
    return { mediaType, data: decodeURIComponent(payload), base64 };
  } catch {
    return { mediaType, data: payload, base64 };
  }
}
