/**
 * GET /v1/auth/key: the SPEC "Key authorization object" for the calling key. Any valid key may ask
 * about itself, whatever its permissions.
 */
import type { FastifyInstance } from 'fastify';
import { newId } from '../core/ids.ts';
import type { AccountUsageReader } from '../services/account-usage.ts';

export function registerAuthKeyRoutes(app: FastifyInstance, usage: AccountUsageReader): void {
  app.get(
    '/v1/auth/key',
    {
      config: {
        switchyard: {
          permission: 'authenticated',
          limits: 'none',
          integerProcessingTime: true,
          summary: 'Validity, tier, permissions and usage of the calling key.',
        },
      },
    },
    async (request, reply) => {
      const auth = request.auth!;
      const snapshot = await usage.read(auth, { budgets: true });
      request.usageSnapshot = snapshot;
      return reply.sendData({
        object: 'authorization',
        id: newId.authorizationCheck(),
        authorized: true,
        tier: auth.tier,
        permissions: [...auth.permissions],
        usage_info: { daily: snapshot.daily, monthly: snapshot.monthly },
        budgets: snapshot.budgets ?? [],
        organization: auth.organizationId,
        created: Math.floor(Date.now() / 1000),
        expires: auth.expiresAt === null ? null : Math.floor(auth.expiresAt / 1000),
      });
    },
  );
}
