/**
 * @fastify/multipart's parts as the file service takes them (services/files `UploadPart`), for the two
 * upload routes: `POST /v1/files` and the dashboard's upload. File streams arrive in request order.
 * Truncation at the limit is reported by the part (checked by the service) instead of thrown, so the
 * rest of the request is still read and the 413 reaches a client that is still sending.
 */
import type { FastifyRequest } from 'fastify';
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
