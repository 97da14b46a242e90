/**
 * Budget alerts' webhooks and delivery log. Owners (`/dashboard/api/webhooks`, `/alert-deliveries`):
 * their organization's endpoints (list, add with the secret answered once, delete, send a test sample)
 * and the log of their organization's emails and webhooks. Operators (`/dashboard/api/operator/...`):
 * the operators' endpoints, which receive every organization's alerts, and every delivery (filtered
 * by organization and status). Every change lands in the organization's or the operators' audit log.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Config } from '../../config/index.ts';
import type { DeliveryRecord, DeliveryStatus } from '../../db/repositories/alert-deliveries-repository.ts';
import { WEBHOOK_EVENT_TYPES } from '../../services/alerts/alert-messages.ts';
import type { EndpointScope, WebhookEndpoints, WebhookEndpointView } from '../../services/alerts/webhook-endpoints.ts';
import { access, pageQuery, parseBody, signedIn, type DashboardApiDependencies, type WithOperator } from './common.ts';
import type { AlertDeliveryObject, CreatedWebhookEndpointObject, PageOf, WebhookEndpointObject, WebhookEndpointsList } from './wire.ts';

type ById = { Params: { id: string } };

const deliveriesQuery = pageQuery.extend({
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  organization: z.string().min(1).max(200).optional(),
});

export function endpointObject(endpoint: WebhookEndpointView): WebhookEndpointObject {
  return {
    id: endpoint.id,
    object: 'webhook_endpoint',
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    organization: endpoint.organizationId,
    created_by: endpoint.createdBy,
    created_at: endpoint.createdAt,
  };
}

/** A line saying what a delivery carries: the email's subject, or the webhook's event. */
function summaryOf(delivery: DeliveryRecord): string {
  try {
    const payload = JSON.parse(delivery.payload) as {
      subject?: string;
      type?: string;
      data?: { budget?: { id?: string }; threshold_percent?: number };
    };
    if (delivery.kind === 'email') return payload.subject ?? delivery.eventType;
    const budget = payload.data?.budget?.id;
    if (payload.type === 'budget.threshold_reached') return `${payload.data?.threshold_percent}% of budget ${budget} reached`;
    if (payload.type === 'budget.projected_to_exceed') return `budget ${budget} projected to be exceeded`;
    return 'test event';
  } catch {
    return delivery.eventType;
  }
}

export function deliveryObject(delivery: DeliveryRecord): AlertDeliveryObject {
  return {
    id: delivery.id,
    object: 'alert.delivery',
    event_type: delivery.eventType,
    organization: delivery.organizationId,
    kind: delivery.kind,
    endpoint_id: delivery.endpointId,
    target: delivery.target,
    summary: summaryOf(delivery),
    status: delivery.status,
    attempts: delivery.attempts,
    last_error: delivery.lastError,
    last_status_code: delivery.lastStatusCode,
    last_attempt_at: delivery.lastAttemptAt,
    next_attempt_at: delivery.status === 'pending' ? delivery.nextAttemptAt : null,
    created_at: delivery.createdAt,
    finished_at: delivery.finishedAt,
  };
}

function endpointsList(config: Config, endpoints: WebhookEndpointView[]): WebhookEndpointsList {
  return {
    object: 'list',
    data: endpoints.map(endpointObject),
    event_types: [...WEBHOOK_EVENT_TYPES],
    allow_http: config.alerts.webhooks.allowHttp,
    mail_configured: config.alerts.emails && config.smtp.url !== undefined,
  };
}

/** A page of the log for `scope` (an organization, or null: every delivery). */
async function deliveriesPage(alerts: WebhookEndpoints, scope: EndpointScope, query: unknown): Promise<PageOf<AlertDeliveryObject>> {
  const parsed = parseBody(deliveriesQuery, query);
  const page = await alerts.deliveries({
    scope,
    limit: parsed.limit,
    ...(parsed.status === undefined ? {} : { status: parsed.status as DeliveryStatus }),
    ...(parsed.organization === undefined || scope !== null ? {} : { organizationId: parsed.organization }),
    ...(parsed.after === undefined ? {} : { after: parsed.after }),
  });
  const last = page.rows[page.rows.length - 1];
  return {
    object: 'list',
    data: page.rows.map(deliveryObject),
    has_more: page.hasMore,
    next: page.hasMore && last !== undefined ? last.id : null,
  };
}

const created = (result: { endpoint: WebhookEndpointView; secret: string }): CreatedWebhookEndpointObject => ({
  ...endpointObject(result.endpoint),
  secret: result.secret,
});

/** The owners' endpoints and log of their organization. */
export const webhooksApi: FastifyPluginAsync<DashboardApiDependencies & { alerts: WebhookEndpoints }> = async (
  app,
  { alerts, accounts, config },
) => {
  const ownerOnly = access('owner');
  const organizationOf = (request: FastifyRequest) => signedIn(request).owner.organizationId;

  app.get('/dashboard/api/webhooks', ownerOnly, async (request) => endpointsList(config, await alerts.list(organizationOf(request))));

  app.post('/dashboard/api/webhooks', ownerOnly, async (request, reply) => {
    const { owner } = signedIn(request);
    const result = await alerts.create(owner.organizationId, request.body, owner.email);
    await accounts.audit(owner, 'webhook.created', result.endpoint.id, request.ip);
    return reply.code(201).send(created(result));
  });

  app.delete<ById>('/dashboard/api/webhooks/:id', ownerOnly, async (request) => {
    const { owner } = signedIn(request);
    await alerts.remove(owner.organizationId, request.params.id);
    await accounts.audit(owner, 'webhook.deleted', request.params.id, request.ip);
    return { id: request.params.id, object: 'webhook_endpoint', deleted: true };
  });

  app.post<ById>('/dashboard/api/webhooks/:id/test', ownerOnly, async (request, reply) => {
    return reply.code(202).send(deliveryObject(await alerts.sendTest(organizationOf(request), request.params.id)));
  });

  app.get('/dashboard/api/alert-deliveries', ownerOnly, async (request) => deliveriesPage(alerts, organizationOf(request), request.query));
};

/** The operators' endpoints (every organization's alerts) and every delivery. */
export const operatorWebhooksApi: FastifyPluginAsync<WithOperator & { alerts: WebhookEndpoints }> = async (
  app,
  { alerts, operator, config },
) => {
  const operatorOnly = access('operator');
  const actor = (request: FastifyRequest) => ({ email: signedIn(request).owner.email, address: request.ip });

  app.get('/dashboard/api/operator/webhooks', operatorOnly, async () => endpointsList(config, await alerts.list(null)));

  app.post('/dashboard/api/operator/webhooks', operatorOnly, async (request, reply) => {
    const result = await alerts.create(null, request.body, signedIn(request).owner.email);
    await operator.organizations.audit(actor(request), 'webhook.created', null, result.endpoint.id, { url: result.endpoint.url });
    return reply.code(201).send(created(result));
  });

  app.delete<ById>('/dashboard/api/operator/webhooks/:id', operatorOnly, async (request) => {
    await alerts.remove(null, request.params.id);
    await operator.organizations.audit(actor(request), 'webhook.deleted', null, request.params.id, null);
    return { id: request.params.id, object: 'webhook_endpoint', deleted: true };
  });

  app.post<ById>('/dashboard/api/operator/webhooks/:id/test', operatorOnly, async (request, reply) => {
    return reply.code(202).send(deliveryObject(await alerts.sendTest(null, request.params.id)));
  });

  app.get('/dashboard/api/operator/alert-deliveries', operatorOnly, async (request) => deliveriesPage(alerts, null, request.query));
};
