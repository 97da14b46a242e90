/**
 * The organization's audit log (who did what, when, from where), newest first.
 */
import type { FastifyPluginAsync } from 'fastify';
import { access, signedIn, type DashboardApiDependencies } from './common.ts';
import type { AuditEntryObject, ListOf } from './wire.ts';

export const auditApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, { accounts }) => {
  app.get('/dashboard/api/audit', access('member'), async (request): Promise<ListOf<AuditEntryObject>> => {
    const entries = await accounts.listAudit(signedIn(request).owner.organizationId);
    return {
      object: 'list',
      data: entries.map((entry) => ({
        id: entry.id,
        actor: entry.actor,
        action: entry.action,
        target: entry.target,
        address: entry.address,
        created_at: entry.createdAt,
        count: entry.occurrences,
      })),
    };
  });
};
