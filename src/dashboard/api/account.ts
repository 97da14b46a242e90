/**
 * A person's own account: the second factor (enrol, turn on, turn off) and the password change. Turning
 * the second factor on or off needs the current password (or, to turn it off, a current code) and ends
 * the person's other sessions; changing the password needs the current one.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { access, parseBody, signedIn, type WithOperator } from './common.ts';

// The secret is the server's (made at enrolment): a `secret` field sent here is ignored.
const totpEnableBody = z.object({ code: z.string().min(1).max(10), password: z.string().max(200).optional() });
const totpDisableBody = z.object({ password: z.string().max(200).optional(), code: z.string().max(40).optional() });
const passwordBody = z.object({ current_password: z.string().min(1).max(200), new_password: z.string().min(1).max(200) });

export const totpApi: FastifyPluginAsync<{ accounts: WithOperator['accounts'] }> = async (app, { accounts }) => {
  app.post('/dashboard/api/totp/enrol', access('member'), async (request) => {
    const enrolment = await accounts.totpEnrolment(signedIn(request).owner);
    return { object: 'dashboard.totp_enrolment', secret: enrolment.secret, uri: enrolment.uri, qr_code: enrolment.qrCode };
  });

  app.post('/dashboard/api/totp/enable', access('member'), async (request) => {
    const body = parseBody(totpEnableBody, request.body);
    const { owner, session } = signedIn(request);
    const password = body.password === undefined ? {} : { password: body.password };
    const recoveryCodes = await accounts.enableTotp(owner, body.code, password, { sessionId: session.id, address: request.ip });
    return { object: 'dashboard.totp', enabled: true, recovery_codes: recoveryCodes };
  });

  app.post('/dashboard/api/totp/disable', access('member'), async (request) => {
    const body = parseBody(totpDisableBody, request.body);
    const { owner, session } = signedIn(request);
    await accounts.disableTotp(
      owner,
      { ...(body.password === undefined ? {} : { password: body.password }), ...(body.code === undefined ? {} : { code: body.code }) },
      { sessionId: session.id, address: request.ip },
    );
    return { object: 'dashboard.totp', enabled: false };
  });
};

/** Everyone's own password change (mounted with the people services). */
export const passwordApi: FastifyPluginAsync<WithOperator> = async (app, { operator }) => {
  app.post('/dashboard/api/password', access('member'), async (request) => {
    const body = parseBody(passwordBody, request.body);
    const { owner: me, session } = signedIn(request);
    await operator.people.changePassword(me, session.id, body.current_password, body.new_password, request.ip);
    return { object: 'dashboard.password', changed: true };
  });
};
