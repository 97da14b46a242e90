/**
 * People and the organization itself, for its owners and members (under /dashboard/api, same session
 * and CSRF rules as dashboard-api.ts): the organization's status and plan (owners of a suspended
 * organization see a banner), its people, invitations by email, role changes, removal (sessions end
 * at once), and everyone's own password change (current password required).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { OrganizationService } from '../accounts/organizations.ts';
import type { OwnerAccounts } from '../accounts/owner-accounts.ts';
import type { PeopleService } from '../accounts/people.ts';
import { allowedKeyTiers } from '../accounts/plans.ts';
import type { Config } from '../config/index.ts';
import { parseBody, type DashboardContext } from './dashboard-api.ts';
import { planObject } from './operator-api.ts';

const inviteBody = z.object({ email: z.string().trim().min(3).max(254), role: z.enum(['owner', 'member']) });
const roleBody = z.object({ role: z.enum(['owner', 'member']) });
const passwordBody = z.object({ current_password: z.string().min(1).max(200), new_password: z.string().min(1).max(200) });

export function registerPeopleApi(
  app: FastifyInstance,
  dependencies: { people: PeopleService; organizations: OrganizationService; accounts: OwnerAccounts; config?: Config },
): void {
  const { people, organizations, accounts } = dependencies;
  const member = { config: { dashboardAccess: 'member' as const } };
  const owner = { config: { dashboardAccess: 'owner' as const } };
  const context = (request: FastifyRequest): DashboardContext => request.dashboard!;

  app.get('/dashboard/api/organization', member, async (request) => {
    const organization = await organizations.get(context(request).owner.organizationId);
    return {
      object: 'organization',
      id: organization.id,
      status: organization.status,
      suspended_at: organization.suspendedAt,
      plan: planObject(organization.effective),
      limits_rule:
        "Day and month token quotas, concurrent batches and requests per batch are the organization's plan, shared by all its keys; per-minute limits are each key's tier, never above the plan.",
      ...(dependencies.config === undefined ? {} : { allowed_key_tiers: allowedKeyTiers(dependencies.config, organization.effective) }),
    };
  });

  app.get('/dashboard/api/people', member, async (request) => {
    const { owner: me } = context(request);
    const list = await people.list(me.organizationId);
    return {
      object: 'list',
      data: list.map((person) => ({
        id: person.id,
        email: person.email,
        role: person.role,
        you: person.id === me.id,
        password_set: person.passwordSet,
        totp_enabled: person.totpEnabled,
        created_at: person.createdAt,
        last_seen_at: person.lastSeenAt,
      })),
    };
  });

  app.post('/dashboard/api/people/invite', owner, async (request, reply) => {
    const body = parseBody(inviteBody, request.body);
    const { owner: me } = context(request);
    const issued = await people.invite(me.organizationId, body.email, body.role, me.email, request.publicOrigin());
    await accounts.audit(me, 'person.invited', `${issued.person.email} (${body.role})`, request.ip);
    return reply.code(201).send({
      object: 'person',
      id: issued.person.id,
      email: issued.person.email,
      role: issued.person.role,
      delivery: issued.delivery,
      // Without SMTP the owner passes the link on by hand.
      link: issued.delivery === 'sent' ? null : issued.link,
    });
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/people/:id/role', owner, async (request) => {
    const body = parseBody(roleBody, request.body);
    const { owner: me } = context(request);
    const person = await people.find(me.organizationId, request.params.id);
    await people.setRole(person, body.role);
    await accounts.audit(me, 'person.role_changed', `${person.email}: ${person.role} -> ${body.role}`, request.ip);
    return { object: 'person', id: person.id, email: person.email, role: body.role };
  });

  app.delete<{ Params: { id: string } }>('/dashboard/api/people/:id', owner, async (request) => {
    const { owner: me } = context(request);
    const person = await people.find(me.organizationId, request.params.id);
    await people.remove(person);
    await accounts.audit(me, 'person.removed', person.email, request.ip);
    return { object: 'person', id: person.id, email: person.email, deleted: true };
  });

  app.post('/dashboard/api/password', member, async (request) => {
    const body = parseBody(passwordBody, request.body);
    const { owner: me, session } = context(request);
    await people.changePassword(me, session.id, body.current_password, body.new_password, request.ip);
    return { object: 'dashboard.password', changed: true };
  });
}
