/**
 * /v1/files (SPEC "File", Endpoints table): upload (multipart, streamed to the blob store), list,
 * retrieve, delete, raw content; and the public signed-link route for generated images. Each handler
 * hands the request to the files use cases (services/files/file-requests.ts) in the OpenAI files wire
 * format (formats/openai-files) and their answer to the edge.
 * The multipart parser is registered for the upload route only, so no other route pays for it.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { openAIFilesWire } from '../formats/openai-files/openai-files-wire.ts';
import { malformedMultipart, uploadParts } from '../http/multipart-parts.ts';
import { FileRequests } from '../services/files/file-requests.ts';
import type { FileService } from '../services/files/file-service.ts';
import type { RequestMetering } from '../services/metering/admitted-request.ts';
import { SIGNED_CONTENT_ROUTE } from '../files/signed-url.ts';
import { callerOf } from './caller-of.ts';

export interface FileRoutesOptions {
  /** Largest uploaded file, bytes. */
  uploadLimitBytes: number;
}

interface FileParams {
  file_id: string;
}

export function registerFileRoutes(app: FastifyInstance, files: FileService, metering: RequestMetering, options: FileRoutesOptions): void {
  const requests = new FileRequests(files, metering, openAIFilesWire, options.uploadLimitBytes);
  void app.register(async (uploads) => {
    await uploads.register(multipart, { limits: { fileSize: options.uploadLimitBytes }, throwFileSizeLimit: false });
    uploads.post(
      '/v1/files',
      { config: { switchyard: { permission: 'files', summary: 'Upload a file (multipart: file, purpose).' } } },
      async (request, reply) =>
        reply.sendAnswer(
          await requests.upload(callerOf(request), {
            multipart: request.isMultipart(),
            parts: () => uploadParts(request, options.uploadLimitBytes),
            clientFault: malformedMultipart,
          }),
        ),
    );
  });

  app.get(
    '/v1/files',
    { config: { switchyard: { permission: 'files', summary: 'List files, newest first (cursor pagination).' } } },
    async (request, reply) => reply.sendAnswer(await requests.list(callerOf(request), request.query)),
  );

  app.get<{ Params: FileParams }>(
    '/v1/files/:file_id',
    { config: { switchyard: { permission: 'files', summary: 'Retrieve a file.' } } },
    async (request, reply) => reply.sendAnswer(await requests.retrieve(callerOf(request), request.params.file_id)),
  );

  app.delete<{ Params: FileParams }>(
    '/v1/files/:file_id',
    { config: { switchyard: { permission: 'files', summary: 'Delete a file and its content.' } } },
    async (request, reply) => reply.sendAnswer(await requests.delete(callerOf(request), request.params.file_id)),
  );

  app.get<{ Params: FileParams }>(
    '/v1/files/:file_id/content',
    { config: { switchyard: { permission: 'files', summary: 'Download the raw content of a file.' } } },
    async (request, reply) => reply.sendAnswer(await requests.content(callerOf(request), request.params.file_id)),
  );

  app.get<{ Params: FileParams }>(
    SIGNED_CONTENT_ROUTE,
    { config: { switchyard: { permission: null, summary: 'Download a file through a signed, expiring link (no key).' } } },
    async (request, reply) => reply.sendAnswer(await requests.signedContent(request.params.file_id, request.query)),
  );
}
