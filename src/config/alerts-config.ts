/**
 * Budget alerts (README "Budgets and alerts"): the `alerts` config section (the ALERT_* environment
 * variables are read into it by environment.ts). The defaults are safe for production: webhooks over HTTPS to public
 * addresses only, each delivery bounded in time, retried with capped exponential backoff for a day.
 */
import { z } from 'zod';

/** A 32-byte key, base64 or base64url: what AES-256-GCM takes. */
const secretsKeySchema = z
  .string()
  .refine(
    (text) => /^[A-Za-z0-9+/_-]{43}=?$/.test(text.trim()) && Buffer.from(text.trim(), 'base64').length === 32,
    'use 32 random bytes in base64, e.g. the output of: openssl rand -base64 32',
  );

export const alertsSchema = z
  .strictObject({
    /**
     * The projected rule waits until this share of a period has passed, percent (1-100): a rate taken
     * from the first hours of a month says little about the month.
     */
    projectedMinElapsedPercent: z.number().min(1).max(100).default(10),
    /** Mail alerts to the organization's owners (through SMTP_URL, as invitations are). ALERT_EMAILS=off turns them off. */
    emails: z.boolean().default(true),
    webhooks: z
      .strictObject({
        /** Accept plain `http://` endpoint URLs (ALERT_WEBHOOKS_ALLOW_HTTP). Off: HTTPS only. */
        allowHttp: z.boolean().default(false),
        /**
         * Deliver to loopback, private, link-local and other non-public addresses (ALERT_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES).
         * Off: such endpoints are refused at registration and every connection is checked after DNS resolution.
         */
        allowPrivateAddresses: z.boolean().default(false),
        /** Longest one delivery may take, connection to the end of the answer, ms (ALERT_WEBHOOK_TIMEOUT_MS). Also bounds one email. */
        timeoutMs: z.number().int().min(100).max(60_000).default(10_000),
        /**
         * Encrypts the endpoints' signing secrets at rest (AES-256-GCM) with this key, 32 bytes in
         * base64 (ALERT_WEBHOOK_SECRETS_KEY). Unset: stored as they are (README says why that is the default).
         */
        secretsKey: secretsKeySchema.optional(),
        /** Endpoints one organization may register (operators: the same number of their own). */
        maxEndpointsPerOrganization: z.number().int().min(1).max(100).default(10),
      })
      .prefault({}),
    delivery: z
      .strictObject({
        /** Delay before the first retry of a failed delivery, ms, doubled for each one after (ALERT_RETRY_FIRST_MS). */
        firstRetryMs: z.number().int().min(10).default(10_000),
        /** Largest delay between two attempts, ms (ALERT_RETRY_MAX_MS). */
        maxRetryMs: z.number().int().min(10).default(3_600_000),
        /** How long a delivery is retried before it is marked failed, ms from its creation (ALERT_RETRY_FOR_MS). */
        retryForMs: z.number().int().min(0).default(86_400_000),
        /** How often an idle dispatcher looks for due deliveries, ms (ALERT_DELIVERY_POLL_MS). */
        pollMs: z.number().int().min(10).default(1_000),
        /** Deliveries one instance sends at once. */
        concurrency: z.number().int().min(1).max(64).default(4),
        /** How long a claimed delivery stays with its instance, ms; another instance takes it after that (its holder died). */
        leaseMs: z.number().int().min(1_000).default(60_000),
        /** Delivered and failed deliveries are kept this many days, then deleted. */
        keepDays: z.number().int().min(1).default(30),
      })
      .prefault({}),
  })
  .superRefine((alerts, context) => {
    if (alerts.delivery.leaseMs < 2 * alerts.webhooks.timeoutMs) {
      context.addIssue({
        code: 'custom',
        path: ['delivery', 'leaseMs'],
        message: `must be at least twice alerts.webhooks.timeoutMs (${2 * alerts.webhooks.timeoutMs}), so a delivery ends before its lease does`,
      });
    }
    if (alerts.delivery.maxRetryMs < alerts.delivery.firstRetryMs) {
      context.addIssue({ code: 'custom', path: ['delivery', 'maxRetryMs'], message: 'must be at least alerts.delivery.firstRetryMs' });
    }
  });
export type AlertsConfig = z.infer<typeof alertsSchema>;
