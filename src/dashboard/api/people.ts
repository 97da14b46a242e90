/**
 * The organization itself and its people, for its owners and members: the organization's status and
 * plan (people of a suspended organization see a banner), its people and pending invitations,
 * invitations by email (re-sent or revoked by id), role changes and removal (owners only; a removed
 * person's sessions end at once).
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { IssuedLink } from '../../accounts/people.ts';
import { allowedKeyTiers } from '../../accounts/plans.ts';
import { access, parseBody, signedIn, type WithOperator } from './common.ts';
import { planObject } from './operator-organizations.ts';
import { LIMITS_RULE } from './usage.ts';

const inviteBody = z.object({ email: z.string().trim().min(3).max(254), role: z.enum(['owner', 'member']) });
const roleBody = z.object({ role: z.enum(['owner', 'member']) });

export const peopleApi: FastifyPluginAsync<WithOperator> = async (app, { operator, accounts, config }) => {
  const { people, organizations } = operator;

  app.get('/dashboard/api/organization', access('member'), async (request) => {
    const organization = await organizations.get(signedIn(request).owner.organizationId);
    return {
      object: 'organization',
      id: organization.id,
      status: organization.status,
      suspended_at: organization.suspendedAt,
      plan: planObject(organization.effective),
      limits_rule: LIMITS_RULE,
      allowed_key_tiers: allowedKeyTiers(config, organization.effective),
    };
  });

  app.get('/dashboard/api/people', access('member'), async (request) => {
    const { owner: me } = signedIn(request);
    const list = await people.list(me.organizationId);
    return {
      object: 'list',
      data: list.map((person) => ({
        id: person.id,
        email: person.email,
        role: person.role,
        you: person.id === me.id,
        password_set: person.passwordSet,
        invitation: person.invitation,
        totp_enabled: person.totpEnabled,
        created_at: person.createdAt,
        last_seen_at: person.lastSeenAt,
      })),
    };
  });

  app.post('/dashboard/api/people/invite', access('owner'), async (request, reply) => {
    const body = parseBody(inviteBody, request.body);
    const { owner: me } = signedIn(request);
    const issued = await people.invite(me.organizationId, body.email, body.role, me.email, request.publicOrigin());
    await accounts.audit(me, 'person.invited', `${issued.person.email} (${body.role})`, request.ip);
    return reply.code(201).send(invitationAnswer(issued));
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/people/:id/resend', access('owner'), async (request, reply) => {
    const { owner: me } = signedIn(request);
    const issued = await people.resend(me.organizationId, request.params.id, me.email, request.publicOrigin());
    await accounts.audit(me, 'person.invited', `${issued.person.email} (${issued.person.role})`, request.ip);
    return reply.code(201).send(invitationAnswer(issued));
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/people/:id/role', access('owner'), async (request) => {
    const body = parseBody(roleBody, request.body);
    const { owner: me } = signedIn(request);
    const changed = await people.changeRole(me.organizationId, request.params.id, body.role);
    await accounts.audit(me, 'person.role_changed', `${changed.email}: ${changed.previous} -> ${body.role}`, request.ip);
    return { object: 'person', id: changed.id, email: changed.email, role: body.role };
  });

  app.delete<{ Params: { id: string } }>('/dashboard/api/people/:id', access('owner'), async (request) => {
    const { owner: me } = signedIn(request);
    const removed = await people.removeById(me.organizationId, request.params.id);
    await accounts.audit(me, removed.invitation ? 'invitation.revoked' : 'person.removed', removed.email, request.ip);
    return { object: 'person', id: removed.id, email: removed.email, deleted: true };
  });
};

/** The answer to an invitation or its re-sending: the same fields whatever the address is. */
function invitationAnswer(issued: IssuedLink) {
  return {
    object: 'person',
    id: issued.person.id,
    email: issued.person.email,
    role: issued.person.role,
    delivery: issued.delivery,
    // Without SMTP the owner passes the link on by hand.
    link: issued.delivery === 'sent' ? null : issued.link,
  };
}
