/**
 * Managing webhook endpoints and reading the delivery log, for the dashboard (owners: their
 * organization's; operators: their own endpoints and every organization's deliveries) and the CLI.
 * An owner's `scope` is their organization id; an operator's is `null`. Inputs are checked here, once,
 * with the SPEC's 400 naming the field (`url`, `events[1]`, `description`); the signing secret is
 * made here, returned once, and stored sealed (signing-secrets.ts).
 */
import { randomAlphanumeric } from '../../core/ids.ts';
import { invalidParameter, notFound, ServiceError } from '../../core/service-error.ts';
import type {
  AlertDeliveryRecords,
  DeliveryRecord,
  DeliveryStatus,
  NewDelivery,
  WebhookEndpointRecord,
  WebhookEndpointRecords,
} from './alert-records.ts';
import type { AlertsConfig } from '../../config/index.ts';
import { ALERT_EVENT_TYPES, testPayload, WEBHOOK_EVENT_TYPES } from './alert-messages.ts';
import { newMessageId } from './budget-alerts.ts';
import { newSigningSecret, type SigningSecrets } from './signing-secrets.ts';
import { checkWebhookUrl, resolveHost, type ResolveHost } from './webhook-url.ts';

/** Whose endpoints: an organization's id, or null for the operators'. */
export type EndpointScope = string | null;

/** An endpoint as shown (never its secret). */
export type WebhookEndpointView = Omit<WebhookEndpointRecord, 'secret'>;

export interface CreatedEndpoint {
  endpoint: WebhookEndpointView;
  /** `whsec_...`: shown this once, never again. */
  secret: string;
}

export interface DeliveryLogQuery {
  /** An organization's owners see their log; null: operators, every delivery. */
  scope: EndpointScope;
  /** Operators: only deliveries about this organization. */
  organizationId?: string;
  status?: DeliveryStatus;
  /** Most rows, 1-100. */
  limit: number;
  /** The id of the last delivery of the previous page. */
  after?: string;
}

export interface WebhookEndpointsOptions {
  endpoints: Pick<WebhookEndpointRecords, 'insert' | 'list' | 'count' | 'find' | 'delete'>;
  deliveries: Pick<AlertDeliveryRecords, 'insert' | 'find' | 'page' | 'countPending'>;
  secrets: SigningSecrets;
  config: AlertsConfig;
  /** A test sample was queued: wakes this instance's dispatcher. */
  onQueued: () => void;
  /** The registration-time DNS check (tests give their own). */
  resolve?: ResolveHost;
  now?: () => number;
}

const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];
/** Test samples one endpoint may have waiting: the test button cannot pile up work for a dead endpoint. */
export const MAX_PENDING_TESTS = 5;

export function viewOf(record: WebhookEndpointRecord): WebhookEndpointView {
  const { secret: _secret, ...view } = record;
  return view;
}

/** `events` as given, each known; absent: every alert event. A 400 naming the first bad entry. */
function checkEvents(value: unknown): string[] {
  if (value === undefined || value === null) return [...ALERT_EVENT_TYPES];
  if (!Array.isArray(value) || value.length === 0) throw invalidParameter('events', 'events must be a non-empty array of event types.');
  if (value.length > WEBHOOK_EVENT_TYPES.length)
    throw invalidParameter('events', `events has at most ${WEBHOOK_EVENT_TYPES.length} entries.`);
  value.forEach((event, index) => {
    if (typeof event !== 'string' || !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(event)) {
      throw invalidParameter(`events[${index}]`, `Unknown event type ${JSON.stringify(event)}: use ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
    }
  });
  return [...new Set(value as string[])];
}

function checkDescription(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > 200)
    throw invalidParameter('description', 'description must be a string of at most 200 characters.');
  return value;
}

export class WebhookEndpoints {
  private readonly now: () => number;

  constructor(private readonly options: WebhookEndpointsOptions) {
    this.now = options.now ?? Date.now;
  }

  async list(scope: EndpointScope): Promise<WebhookEndpointView[]> {
    return (await this.options.endpoints.list(scope)).map(viewOf);
  }

  /** Registers an endpoint from a request body (`url`, optional `events` and `description`); the secret is in the answer only. */
  async create(scope: EndpointScope, body: unknown, createdBy: string): Promise<CreatedEndpoint> {
    const input = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const { webhooks } = this.options.config;
    const url = await checkWebhookUrl(input['url'], webhooks, this.options.resolve ?? resolveHost);
    const events = checkEvents(input['events']);
    const description = checkDescription(input['description']);
    if ((await this.options.endpoints.count(scope)) >= webhooks.maxEndpointsPerOrganization) {
      throw invalidParameter(null, `At most ${webhooks.maxEndpointsPerOrganization} webhook endpoints: delete one first.`);
    }
    const id = `whep_${randomAlphanumeric(24)}`;
    const secret = newSigningSecret();
    const record: WebhookEndpointRecord = {
      id,
      organizationId: scope,
      url,
      description,
      events,
      secret: this.options.secrets.seal(secret, id),
      createdBy,
      createdAt: this.now(),
    };
    await this.options.endpoints.insert(record);
    return { endpoint: viewOf(record), secret };
  }

  async remove(scope: EndpointScope, id: string): Promise<void> {
    if (!(await this.options.endpoints.delete(id, scope, this.now()))) throw endpointNotFound(id);
  }

  /** Queues a `webhook.test` sample to the endpoint; the delivery as queued (the dispatcher sends it at once). */
  async sendTest(scope: EndpointScope, id: string): Promise<DeliveryRecord> {
    const endpoint = await this.options.endpoints.find(id);
    if (endpoint === undefined || endpoint.organizationId !== scope) throw endpointNotFound(id);
    if ((await this.options.deliveries.countPending(endpoint.id, 'webhook.test')) >= MAX_PENDING_TESTS) {
      throw new ServiceError({
        status: 429,
        type: 'rate_limit_exceeded',
        code: 'too_many_pending_tests',
        message: `${MAX_PENDING_TESTS} test events to this endpoint are still waiting to be delivered: see the delivery log, and try again once they are.`,
      });
    }
    const now = this.now();
    const deliveryId = newMessageId();
    const delivery: NewDelivery = {
      id: deliveryId,
      alertId: null,
      eventType: 'webhook.test',
      organizationId: scope,
      audienceOrganizationId: scope,
      kind: 'webhook',
      endpointId: endpoint.id,
      target: endpoint.url,
      payload: testPayload(`evt_${deliveryId.slice('msg_'.length)}`, endpoint, now),
      nextAttemptAt: now,
      giveUpAt: now + this.options.config.delivery.retryForMs,
      createdAt: now,
    };
    await this.options.deliveries.insert(delivery);
    this.options.onQueued();
    return (await this.options.deliveries.find(deliveryId))!;
  }

  /** A page of the delivery log, newest first, and whether more follow. */
  async deliveries(query: DeliveryLogQuery): Promise<{ rows: DeliveryRecord[]; hasMore: boolean }> {
    if (query.status !== undefined && !DELIVERY_STATUSES.includes(query.status)) {
      throw invalidParameter('status', `status must be one of ${DELIVERY_STATUSES.join(', ')}.`);
    }
    let after: { createdAt: number; id: string } | undefined;
    if (query.after !== undefined) {
      const cursor = await this.options.deliveries.find(query.after);
      if (cursor === undefined || (query.scope !== null && cursor.audienceOrganizationId !== query.scope)) {
        throw invalidParameter('after', `No delivery '${query.after}' to continue after.`);
      }
      after = { createdAt: cursor.createdAt, id: cursor.id };
    }
    const rows = await this.options.deliveries.page({
      ...(query.scope === null ? {} : { audienceOrganizationId: query.scope }),
      ...(query.organizationId === undefined ? {} : { organizationId: query.organizationId }),
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(after === undefined ? {} : { after }),
      limit: query.limit + 1,
    });
    return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }
}

function endpointNotFound(id: string) {
  return notFound('webhook_endpoint_not_found', `No webhook endpoint '${id}' here.`, 'id');
}
