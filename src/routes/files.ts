/**
 * /v1/files (SPEC "File", Endpoints table): upload (multipart, streamed to the blob store), list,
 * retrieve, delete, raw content; and the public signed-link route for generated images.
 * The multipart parser is registered for the upload route only, so no other route pays for it.
 */
import { buffer } from 'node:stream/consumers';
import multipart from '@fastify/multipart';
import { malformedMultipart, uploadParts } from '../http/multipart-parts.ts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { invalidFormat, invalidParameter } from '../core/service-error.ts';
import { toFileObject } from '../services/files/file-object.ts';
import type { FileService, OpenedFile } from '../services/files/file-service.ts';
import { SIGNED_CONTENT_ROUTE } from '../files/signed-url.ts';

export interface FileRoutesOptions {
  /** Largest uploaded file, bytes. */
  uploadLimitBytes: number;
}

interface FileParams {
  file_id: string;
}

interface ListQuery {
  after?: string;
  limit?: string;
  order?: string;
  purpose?: string;
}

/** `limit` as an integer from 1 to `max`, `fallback` when absent. */
export function parseLimit(value: string | undefined, max: number, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > max) throw invalidParameter('limit', `limit must be an integer from 1 to ${max}.`);
  return limit;
}

/** Files up to this size are read whole and sent in one write; larger ones are streamed. */
const BUFFERED_CONTENT_BYTES = 1024 * 1024;

/**
 * Raw bytes, not wrapped in `_metadata`. Small files go out in one write so the answer is complete
 * the moment its last byte is sent (a streamed answer ends one read later, after the client may
 * already have everything, which keeps the connection busy a little longer than needed).
 */
async function sendContent(reply: FastifyReply, opened: OpenedFile, headers: Record<string, string> = {}): Promise<FastifyReply> {
  void reply.type(opened.file.mediaType).header('x-content-type-options', 'nosniff').headers(headers);
  if (opened.file.bytes <= BUFFERED_CONTENT_BYTES) return reply.send(await buffer(opened.content));
  return reply.header('content-length', opened.file.bytes).send(opened.content);
}

function listPage<T extends { id: string }>(data: T[], hasMore: boolean): Record<string, unknown> {
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: hasMore };
}

export function registerFileRoutes(app: FastifyInstance, files: FileService, options: FileRoutesOptions): void {
  void app.register(async (uploads) => {
    await uploads.register(multipart, { limits: { fileSize: options.uploadLimitBytes }, throwFileSizeLimit: false });
    uploads.post(
      '/v1/files',
      { config: { switchyard: { permission: 'files', summary: 'Upload a file (multipart: file, purpose).' } } },
      async (request, reply) => {
        if (!request.isMultipart())
          throw invalidFormat(null, 'Send the upload as multipart/form-data with the parts "file" and "purpose".');
        let file;
        try {
          file = await files.upload(request.auth!.organizationId, uploadParts(request, options.uploadLimitBytes), options.uploadLimitBytes);
        } catch (error) {
          throw malformedMultipart(error) ?? error;
        }
        return reply.sendData({ ...toFileObject(file) });
      },
    );
  });

  app.get<{ Querystring: ListQuery }>(
    '/v1/files',
    { config: { switchyard: { permission: 'files', summary: 'List files, newest first (cursor pagination).' } } },
    async (request, reply) => {
      const query = request.query;
      const order = query.order ?? 'desc';
      if (order !== 'asc' && order !== 'desc') throw invalidParameter('order', "order must be 'asc' or 'desc'.");
      const page = await files.list(request.auth!.organizationId, {
        limit: parseLimit(query.limit, 10_000, 10_000),
        order,
        ...(query.after === undefined || query.after === '' ? {} : { after: query.after }),
        ...(query.purpose === undefined || query.purpose === '' ? {} : { purpose: query.purpose }),
      });
      return reply.sendData(listPage(page.files.map(toFileObject), page.hasMore));
    },
  );

  app.get<{ Params: FileParams }>(
    '/v1/files/:file_id',
    { config: { switchyard: { permission: 'files', summary: 'Retrieve a file.' } } },
    async (request, reply) =>
      reply.sendData({ ...toFileObject(await files.retrieve(request.auth!.organizationId, request.params.file_id)) }),
  );

  app.delete<{ Params: FileParams }>(
    '/v1/files/:file_id',
    { config: { switchyard: { permission: 'files', summary: 'Delete a file and its content.' } } },
    async (request, reply) => {
      const file = await files.delete(request.auth!.organizationId, request.params.file_id);
      return reply.sendData({ id: file.id, object: 'file', deleted: true });
    },
  );

  app.get<{ Params: FileParams }>(
    '/v1/files/:file_id/content',
    { config: { switchyard: { permission: 'files', summary: 'Download the raw content of a file.' } } },
    async (request, reply) => {
      return sendContent(reply, await files.openContent(request.auth!.organizationId, request.params.file_id));
    },
  );

  app.get<{ Params: FileParams; Querystring: { expires?: string; signature?: string } }>(
    SIGNED_CONTENT_ROUTE,
    { config: { switchyard: { permission: null, summary: 'Download a file through a signed, expiring link (no key).' } } },
    async (request, reply) => {
      const opened = await files.openSignedContent(request.params.file_id, request.query.expires, request.query.signature);
      return sendContent(reply, opened, { 'cache-control': 'private, max-age=300' });
    },
  );
}
