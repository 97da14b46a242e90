/**
 * Signed, expiring links to one stored file, for clients that fetch a URL without an API key
 * (generated images). The signature is HMAC-SHA256 over the file id and the expiry with a secret
 * every instance shares, so any instance can check a link another one made.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Path of the public route that serves a signed link (Fastify pattern). */
export const SIGNED_CONTENT_ROUTE = '/v1/files/:file_id/signed-content';

function signature(secret: string, fileId: string, expiresAtSeconds: number): string {
  return createHmac('sha256', secret).update(`${fileId}\n${expiresAtSeconds}`).digest('base64url');
}

/**
 * The link `<origin>/v1/files/<fileId>/signed-content?expires=<unix seconds>&signature=<hmac>`.
 * @param origin Scheme, host and port, without `/v1` (e.g. `https://ai.example.com`).
 * @param expiresAtSeconds Unix seconds after which the link stops working.
 */
export function buildSignedFileUrl(secret: string, origin: string, fileId: string, expiresAtSeconds: number): string {
  const base = origin.replace(/\/+$/, '');
  return `${base}/v1/files/${encodeURIComponent(fileId)}/signed-content?expires=${expiresAtSeconds}&signature=${signature(secret, fileId, expiresAtSeconds)}`;
}

export type SignedUrlCheck = 'valid' | 'invalid' | 'expired';

/**
 * Checks a presented link. `expired` only for a correctly signed link past its time, so a tampered
 * expiry reads as `invalid`.
 * @param nowSeconds Current Unix time, seconds.
 */
export function checkSignedFileUrl(
  secret: string,
  fileId: string,
  expires: string | undefined,
  presented: string | undefined,
  nowSeconds: number,
): SignedUrlCheck {
  if (expires === undefined || presented === undefined || !/^\d{1,12}$/.test(expires)) return 'invalid';
  const expiresAtSeconds = Number(expires);
  const expected = Buffer.from(signature(secret, fileId, expiresAtSeconds));
  const candidate = Buffer.from(presented);
  if (candidate.length !== expected.length || !timingSafeEqual(candidate, expected)) return 'invalid';
  return expiresAtSeconds < nowSeconds ? 'expired' : 'valid';
}
