/**
 * The organization's files: the list, a download (always an attachment, never sniffed), and deleting
 * one (owners only, audited).
 */
import type { FastifyPluginAsync } from 'fastify';
import { toFileObject } from '../../services/files/file-object.ts';
import { access, signedIn, type DashboardApiDependencies } from './common.ts';
import type { FileObject, ListOf } from './wire.ts';

type ById = { Params: { id: string } };

export const filesApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, { files, accounts }) => {
  app.get('/dashboard/api/files', access('member'), async (request): Promise<ListOf<FileObject>> => {
    const listed = await files.list(signedIn(request).owner.organizationId, { limit: 200, order: 'desc' });
    return { object: 'list', data: listed.files.map(toFileObject) };
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
