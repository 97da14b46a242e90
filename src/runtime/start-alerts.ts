/**
 * Start step: budget alerts. The `SpendObserver` the metering service is given (it only queues), the
 * webhook endpoints service of the dashboard and CLI, and this instance's delivery dispatcher, which
 * sends what any instance queued. Mail goes through the invitations' mailer (accounts/mailer.ts),
 * seen through the alerts' small `AlertMail` port. Closed before the database: the observer writes
 * what waits (bounded), the dispatcher gives back what it holds.
 */
import type { Logger } from 'pino';
import type { Mailer } from '../accounts/mailer.ts';
import type { Config } from '../config/index.ts';
import type { Database } from '../db/database.ts';
import { AlertDeliveriesRepository } from '../db/repositories/alert-deliveries-repository.ts';
import { BudgetAlertsRepository } from '../db/repositories/budget-alerts-repository.ts';
import { WebhookEndpointsRepository } from '../db/repositories/webhook-endpoints-repository.ts';
import { BudgetAlerts } from '../services/alerts/budget-alerts.ts';
import { DeliveryDispatcher, type AlertMail } from '../services/alerts/delivery-dispatcher.ts';
import { SigningSecrets } from '../services/alerts/signing-secrets.ts';
import { WebhookEndpoints } from '../services/alerts/webhook-endpoints.ts';
import { WebhookSender } from '../services/alerts/webhook-sender.ts';
import type { Opened } from './open-stores.ts';

export interface Alerts {
  /** Pass to the metering service: told after every settlement that touched a budget. */
  spendObserver: BudgetAlerts;
  /** Endpoints and the delivery log (dashboard, CLI). */
  endpoints: WebhookEndpoints;
  /** This instance's dispatcher; undefined when started without one. */
  dispatcher: DeliveryDispatcher | undefined;
  /** Writes what the observer holds, stops the dispatcher, closes the webhook connections. */
  close(): Promise<void>;
}

/** The invitations' mailer as the alerts use it: `configured` only with SMTP_URL. */
export function alertMailOf(config: Config, mailer: Mailer): AlertMail {
  return {
    configured: config.smtp.url !== undefined,
    async send(message) {
      await mailer.send(message);
    },
  };
}

export function startAlerts(
  config: Config,
  open: { database: Database; mailer: Mailer; instanceId: string; logger: Logger; dispatcher: boolean; opened: Opened },
): Alerts {
  const db = open.database.db;
  const logger = open.logger.child({ component: 'alerts' });
  const deliveries = new AlertDeliveriesRepository(db);
  const endpointsRepository = new WebhookEndpointsRepository(db);
  const alertsRepository = new BudgetAlertsRepository(db);
  const secrets = new SigningSecrets(config.alerts.webhooks.secretsKey);
  const sender = new WebhookSender({
    allowHttp: config.alerts.webhooks.allowHttp,
    allowPrivateAddresses: config.alerts.webhooks.allowPrivateAddresses,
    timeoutMs: config.alerts.webhooks.timeoutMs,
  });
  const dispatcher = open.dispatcher
    ? new DeliveryDispatcher({
        deliveries,
        endpoints: endpointsRepository,
        alerts: alertsRepository,
        mail: alertMailOf(config, open.mailer),
        webhooks: sender,
        secrets,
        instanceId: open.instanceId,
        config: config.alerts,
        logger,
      })
    : undefined;
  const wake = () => dispatcher?.wake();
  const spendObserver = new BudgetAlerts({
    repository: alertsRepository,
    config: config.alerts,
    operator: config.operator,
    logger,
    onQueued: wake,
  });
  const endpoints = new WebhookEndpoints({ endpoints: endpointsRepository, deliveries, secrets, config: config.alerts, onQueued: wake });
  dispatcher?.start();
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await spendObserver.close();
      await dispatcher?.stop();
      await sender.close();
    })());
  open.opened.push(close);
  return { spendObserver, endpoints, dispatcher, close };
}
