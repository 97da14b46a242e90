/**
 * The organization's files: a page of the list (newest first, searchable by name or id), upload (owners
 * only: multipart `file` and `purpose`, as /v1/files takes it, audited), a download (always an
 * attachment, never sniffed), and deleting one (owners only, audited).
 */
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync } from 'fastify';
import { invalidParameter } from '../../core/service-error.ts';
import { toFileObject } from '../../formats/openai-files/file-object.ts';
import { UNLISTED_FILE_PURPOSES } from '../../services/files/file-service.ts';
import { malformedMultipart, uploadParts } from '../../http/multipart-parts.ts';
import { access, pageOf, pageQuery, parseBody, signedIn, type DashboardApiDependencies } from './common.ts';
import type { FileObject, PageOf } from './wire.ts';

type ById = { Params: { id: string } };

export const filesApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, { files, accounts, lists, config }) => {
  app.get('/dashboard/api/files', access('member'), async (request): Promise<PageOf<FileObject>> => {
    const { organizationId } = signedIn(request).owner;
    const query = parseBody(pageQuery, request.query);
    let after: { createdAt: number; id: string } | undefined;
    if (query.after !== undefined) {
      const cursor = await lists.files.findById(query.after);
      if (cursor === undefined || cursor.organizationId !== organizationId)
        throw invalidParameter('after', `No file '${query.after}' to continue after.`);
      after = { createdAt: cursor.createdAt, id: cursor.id };
    }
    const rows = await lists.files.list({
      organizationId,
      order: 'desc',
      limit: query.limit + 1,
      now: Date.now(),
      excludePurposes: UNLISTED_FILE_PURPOSES,
      ...(after === undefined ? {} : { after }),
      ...(query.q === undefined ? {} : { search: query.q }),
    });
    return pageOf(rows, query.limit, toFileObject, (file) => file.id);
  });

  // The multipart parser only for the upload, in its own scope (the session hook still runs first).
  await app.register(async (uploads) => {
    await uploads.register(multipart, { limits: { fileSize: config.server.uploadLimitBytes }, throwFileSizeLimit: false });
    uploads.post('/dashboard/api/files', access('owner'), async (request, reply) => {
      if (!request.isMultipart())
        throw invalidParameter(null, 'Send the upload as multipart/form-data with the parts "file" and "purpose".');
      const { owner } = signedIn(request);
      const limit = config.server.uploadLimitBytes;
      let file;
      try {
        file = await files.upload(owner.organizationId, uploadParts(request, limit), limit);
      } catch (error) {
        // A body that is not well-formed multipart is the client's mistake: 400, as on /v1/files.
        throw malformedMultipart(error) ?? error;
      }
      await accounts.audit(owner, 'file.uploaded', file.id, request.ip);
      return reply.code(201).send(toFileObject(file));
    });
  });

  app.get<ById>('/dashboard/api/files/:id/content', access('member'), async (request, reply) => {
    const opened = await files.openContent(signedIn(request).owner.organizationId, request.params.id);
    const safeName = opened.file.filename.replace(/[^A-Za-z0-9._-]/g, '_');
    return reply
      .type(opened.file.mediaType)
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', `attachment; filename="${safeName}"`)
      .send(opened.content);
  });

  app.delete<ById>('/dashboard/api/files/:id', access('owner'), async (request) => {
    const { owner } = signedIn(request);
    const file = await files.delete(owner.organizationId, request.params.id);
    await accounts.audit(owner, 'file.deleted', file.id, request.ip);
    return { id: file.id, object: 'file', deleted: true };
  });
};
