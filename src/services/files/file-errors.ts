/**
 * The errors of the file endpoints (SPEC "Errors": 404 `file_not_found`, 410 `file_expired`), plus
 * 413 for an upload over the limit and 403 for a bad signed link.
 */
import { ServiceError } from '../../core/service-error.ts';

/** 404 for an unknown id, a deleted file or another organization's file: they are indistinguishable. */
export function fileNotFound(fileId: string): ServiceError {
  return new ServiceError({
    status: 404,
    type: 'invalid_request_error',
    code: 'file_not_found',
    message: `File not found or access denied: '${fileId}'.`,
  });
}

export function fileExpired(fileId: string): ServiceError {
  return new ServiceError({
    status: 410,
    type: 'invalid_request_error',
    code: 'file_expired',
    message: `The file '${fileId}' has expired and its content is no longer stored.`,
  });
}

export function fileTooLarge(maxBytes: number): ServiceError {
  return new ServiceError({
    status: 413,
    type: 'invalid_request_error',
    code: 'file_too_large',
    param: 'file',
    message: `The file is larger than this server accepts (${maxBytes} bytes). Nothing was stored.`,
  });
}

/** 403 for a signed link that does not verify (`invalid_signature`) or is past its time (`url_expired`). */
const SIGNED_LINK_REFUSALS = {
  url_expired: 'This link has expired. Ask for a new one.',
  invalid_signature: 'This link is not valid: its signature does not match.',
  organization_suspended: "This file's organization is suspended: its links serve nothing until the operator reactivates it.",
} as const;

export function signedLinkRefused(code: keyof typeof SIGNED_LINK_REFUSALS): ServiceError {
  return new ServiceError({ status: 403, type: 'permission_error', code, message: SIGNED_LINK_REFUSALS[code] });
}

/** Bytes as the messages say them: `104857600 bytes (100.0 MiB)`. */
function sizeText(bytes: number): string {
  return `${bytes} bytes (${(bytes / 1024 / 1024).toFixed(1)} MiB)`;
}

/**
 * 413 `storage_quota_exceeded`: the upload would take the organization past its storage quota. Nothing
 * was stored. `details` in bytes: the quota, what is stored, what uploads in flight hold, and how far
 * this upload had got when it was refused (at least that much more was needed).
 */
export function storageQuotaExceeded(figures: {
  limitBytes: number;
  storedBytes: number;
  reservedBytes: number;
  uploadBytes: number;
}): ServiceError {
  const free = Math.max(0, figures.limitBytes - figures.storedBytes - figures.reservedBytes);
  return new ServiceError({
    status: 413,
    type: 'invalid_request_error',
    code: 'storage_quota_exceeded',
    param: 'file',
    message:
      `This upload would exceed your organization's storage quota of ${sizeText(figures.limitBytes)}: ` +
      `${sizeText(figures.storedBytes)} are stored${figures.reservedBytes > 0 ? ` and ${sizeText(figures.reservedBytes)} held by uploads in progress` : ''}, ` +
      `${sizeText(free)} free. Nothing was stored. Delete files you no longer need, or ask the operator for a larger quota.`,
    details: {
      limit_bytes: figures.limitBytes,
      used_bytes: figures.storedBytes,
      reserved_bytes: figures.reservedBytes,
      upload_bytes_at_refusal: figures.uploadBytes,
    },
  });
}
