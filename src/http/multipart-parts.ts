/**
 * @fastify/multipart's parts as the file service takes them (services/files `UploadPart`), for the two
 * upload routes: `POST /v1/files` and the dashboard's upload. File streams arrive in request order.
 * Truncation at the limit is reported by the part (checked by the service) instead of thrown, so the
 * rest of the request is still read and the 413 reaches a client that is still sending.
 */
import type { FastifyRequest } from 'fastify';
import { invalidFormat, isServiceError, type ServiceError } from '../core/service-error.ts';
import type { UploadPart } from '../services/files/file-service.ts';

export async function* uploadParts(request: FastifyRequest, uploadLimitBytes: number): AsyncGenerator<UploadPart> {
  for await (const part of request.parts({ limits: { fileSize: uploadLimitBytes, fields: 20, fieldSize: 64 * 1024 } })) {
    if (part.type === 'file') {
      const stream = part.file;
      yield {
        kind: 'file',
        name: part.fieldname,
        filename: part.filename,
        mediaType: part.mimetype,
        content: stream,
        isTruncated: () => stream.truncated,
      };
    } else {
      yield { kind: 'field', name: part.fieldname, value: String(part.value) };
    }
  }
}

/**
 * The multipart parser's (busboy's) own errors for a body that is not well-formed multipart: no
 * boundary (or one longer than the parser takes), or a body that ends before its closing boundary,
 * inside a part or between parts. They are plain Errors known by their messages only.
 */
const MALFORMED_MULTIPART = /boundary not found|boundary required|unexpected end of multipart data|needle cannot/i;

/** A 400 for a malformed multipart body (the parser's error, or one it caused further down the upload), else undefined. */
export function malformedMultipart(error: unknown): ServiceError | undefined {
  let current: unknown = error;
  for (let hops = 0; current instanceof Error && hops < 5; hops++) {
    // A refusal of the request itself (413, missing part...) stands as it is.
    if (isServiceError(current) && current.status < 500) return undefined;
    if (MALFORMED_MULTIPART.test(current.message)) {
      return invalidFormat(
        null,
        `The multipart/form-data body is malformed (${current.message}). Send a boundary in the content type and end the body with the closing boundary.`,
      );
    }
    current = current.cause;
  }
  return undefined;
}
