/**
 * The organization's audit log (who did what, when, from where), newest first, a page at a time and
 * searchable by actor, action or target. Key ids in a target are named as the keys page names keys.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { ApiKeyRecord } from '../../db/repositories/api-keys-repository.ts';
import { access, pageOf, pageQuery, parseBody, signedIn, type DashboardApiDependencies } from './common.ts';
import type { AuditEntryObject, PageOf } from './wire.ts';

/** The audit log's cursor is the id of the last row shown. */
const auditQuery = pageQuery.extend({ after: z.coerce.number().int().positive().optional() });

const KEY_ID = /\bkey_[A-Za-z0-9]+\b/g;

/** `target` with each key id it holds named `name (prefix)`; null when it names no key. */
export function keyLabel(target: string | null, keys: ReadonlyMap<string, Pick<ApiKeyRecord, 'name' | 'redacted'>>): string | null {
  if (target === null || target.search(KEY_ID) === -1) return null;
  return target.replace(KEY_ID, (id) => {
    const key = keys.get(id);
    return key === undefined ? id : `${key.name ?? 'unnamed'} (${key.redacted})`;
  });
}

export const auditApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, { keys, lists }) => {
  app.get('/dashboard/api/audit', access('member'), async (request): Promise<PageOf<AuditEntryObject>> => {
    const { organizationId } = signedIn(request).owner;
    const query = parseBody(auditQuery, request.query);
    const [entries, keyRecords] = await Promise.all([
      lists.owners.auditPage(organizationId, {
        limit: query.limit + 1,
        ...(query.after === undefined ? {} : { before: query.after }),
        ...(query.q === undefined ? {} : { search: query.q }),
      }),
      keys.list(organizationId),
    ]);
    const byId = new Map(keyRecords.map((record) => [record.id, record]));
    return pageOf(
      entries,
      query.limit,
      (entry) => ({
        id: entry.id,
        actor: entry.actor,
        action: entry.action,
        target: entry.target,
        target_label: keyLabel(entry.target, byId),
        address: entry.address,
        created_at: entry.createdAt,
        count: entry.occurrences,
      }),
      (entry) => String(entry.id),
    );
  });
};
