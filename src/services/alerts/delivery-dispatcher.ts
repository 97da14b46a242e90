/**
 * The alerts' dispatcher: one per instance, off the request path. It claims due deliveries from the
 * outbox with a lease (db/repositories/alert-deliveries-repository.ts), so any instance may send any
 * of them and each attempt is made by one; sends at most `concurrency` at once, each bounded by the
 * webhook timeout; records every attempt in the delivery log; retries a failure with capped
 * exponential backoff (core/retry.ts; a 429/503's `retry-after` within the same cap) until the
 * delivery's retry window ends, then marks it failed. A webhook endpoint that fails holds back its
 * other queued deliveries until the retry, so a dead endpoint costs one attempt per step, not one per
 * message. Emails go to the organization's owners through the invitations' SMTP set-up (an `AlertMail`);
 * without SMTP they are marked failed at once, saying so. Finished deliveries older than `keepDays`
 * and alerts of periods that ended before then are deleted about once an hour.
 */
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { AlertsConfig } from '../../config/index.ts';
import { backoff, retryDelay } from '../../core/retry.ts';
import type { AlertDeliveryRecords, BudgetAlertRecords, DeliveryRecord, FailedAttempt, WebhookEndpointRecords } from './alert-records.ts';
import type { SigningSecrets } from './signing-secrets.ts';
import type { PostOutcome, WebhookSender } from './webhook-sender.ts';

/** Mail as the alerts use it: a small port over the invitations' mailer (accounts/mailer.ts), adapted by the runtime. */
export interface AlertMail {
  /** False without SMTP_URL: alert mail is then recorded as not sent, never written to the log. */
  readonly configured: boolean;
  /** Resolves when the SMTP server accepted the message; rejects when it refused or could not be reached. */
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

export interface DeliveryDispatcherOptions {
  deliveries: Pick<
    AlertDeliveryRecords,
    'claim' | 'delivered' | 'attemptFailed' | 'postponeEndpoint' | 'releaseHeldBy' | 'purgeFinishedBefore'
  >;
  endpoints: Pick<WebhookEndpointRecords, 'find'>;
  alerts: Pick<BudgetAlertRecords, 'purgeEndedBefore'>;
  mail: AlertMail;
  webhooks: Pick<WebhookSender, 'post'>;
  secrets: SigningSecrets;
  /** This instance's id: the lease owner. */
  instanceId: string;
  config: AlertsConfig;
  logger: Logger;
  /** Time source, ms since the epoch (tests). */
  now?: () => number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Backoff of the dispatcher's own claims while the database fails them. */
const CLAIM_BACKOFF = { initialMs: 500, maxMs: 30_000, jitter: 0.5 };

/** One attempt's result: delivered (with the HTTP status of a webhook), or failed and whether it may be retried. */
type AttemptResult =
  | { delivered: true; status: number | null }
  | { delivered: false; status: number | null; error: string; retryable: boolean; retryAfterMs: number | null };

export class DeliveryDispatcher {
  private readonly now: () => number;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private nudge: (() => void) | undefined;
  private woken = false;
  private claimFailures = 0;
  private nextPurgeAt = 0;

  constructor(private readonly options: DeliveryDispatcherOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** New deliveries were queued (on this instance): look now instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.nudge?.();
  }

  /** Stops claiming, aborts webhook attempts in flight (not counted as attempts), waits for the rest, frees what it holds. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.nudge?.();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    await this.options.deliveries.releaseHeldBy(this.options.instanceId).catch(() => undefined);
  }

  private async run(): Promise<void> {
    const { concurrency, pollMs } = this.options.config.delivery;
    while (!this.stopping.signal.aborted) {
      this.woken = false;
      const free = concurrency - this.inFlight.size;
      let delayMs = pollMs;
      if (free > 0) {
        const claimed = await this.claim(free);
        if (claimed === undefined) delayMs = backoff(CLAIM_BACKOFF, this.claimFailures - 1);
        else {
          for (const delivery of claimed) this.track(this.attempt(delivery));
          // A full claim: more may be due; take them as soon as there is room.
          if (claimed.length === free) delayMs = 0;
        }
      }
      await this.purgeWhenDue();
      if (this.woken || this.stopping.signal.aborted) continue;
      await this.pause(delayMs);
    }
  }

  /** Up to `limit` due deliveries; undefined when the claim failed (the database is away). */
  private async claim(limit: number): Promise<DeliveryRecord[] | undefined> {
    const { instanceId, config, logger } = this.options;
    try {
      const claimed = await this.options.deliveries.claim(instanceId, this.now(), config.delivery.leaseMs, limit);
      if (this.claimFailures > 0) logger.info('alert deliveries: the database answers again; dispatching resumes');
      this.claimFailures = 0;
      return claimed;
    } catch (error) {
      // One line per outage, not per poll.
      if (this.claimFailures === 0) logger.warn({ err: error }, 'alert deliveries cannot be claimed (database); retrying with backoff');
      this.claimFailures += 1;
      return undefined;
    }
  }

  /** Waits `delayMs`, or less when woken, stopped or (while full) an attempt ends. */
  private pause(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.nudge = undefined;
        resolve();
      };
      const timer = setTimeout(done, delayMs);
      timer.unref();
      this.nudge = done;
    });
  }

  private track(attempt: Promise<void>): void {
    this.inFlight.add(attempt);
    void attempt.finally(() => {
      this.inFlight.delete(attempt);
      this.nudge?.();
    });
  }

  private async attempt(delivery: DeliveryRecord): Promise<void> {
    const { deliveries, instanceId, logger } = this.options;
    try {
      const result = delivery.kind === 'email' ? await this.sendEmail(delivery) : await this.sendWebhook(delivery);
      if (this.stopping.signal.aborted && !result.delivered) return; // given back by stop(), not an attempt
      const now = this.now();
      if (result.delivered) await deliveries.delivered(delivery.id, instanceId, now, result.status);
      else await this.recordFailure(delivery, result, now);
    } catch (error) {
      // The outcome could not be written (database away): the lease lapses and the attempt is made again.
      logger.warn({ err: error, delivery: delivery.id }, 'alert delivery outcome could not be recorded; it will be attempted again');
    }
  }

  private async recordFailure(delivery: DeliveryRecord, result: Extract<AttemptResult, { delivered: false }>, now: number): Promise<void> {
    const { deliveries, instanceId, config, logger } = this.options;
    const policy = {
      initialMs: config.delivery.firstRetryMs,
      maxMs: config.delivery.maxRetryMs,
      maxRetryAfterMs: config.delivery.maxRetryMs,
      jitter: 0.2,
    };
    const retryAt =
      !result.retryable || now >= delivery.giveUpAt
        ? null
        : Math.min(now + retryDelay(policy, delivery.attempts, result.retryAfterMs), delivery.giveUpAt);
    const outcome: FailedAttempt = { error: result.error, statusCode: result.status, retryAt };
    const status = await deliveries.attemptFailed(delivery.id, instanceId, now, outcome);
    if (status === 'failed') {
      logger.warn(
        {
          delivery: delivery.id,
          kind: delivery.kind,
          endpoint: delivery.endpointId,
          organization: delivery.organizationId,
          attempts: delivery.attempts + 1,
          error: result.error,
        },
        'alert delivery failed for good',
      );
    } else if (status === 'pending' && retryAt !== null && delivery.endpointId !== null) {
      await deliveries.postponeEndpoint(delivery.endpointId, retryAt, now);
    }
  }

  private async sendEmail(delivery: DeliveryRecord): Promise<AttemptResult> {
    const { mail, config } = this.options;
    if (!mail.configured) {
      return {
        delivered: false,
        status: null,
        error: 'mail is not configured: set SMTP_URL (the mail server invitations use)',
        retryable: false,
        retryAfterMs: null,
      };
    }
    const { subject, text } = JSON.parse(delivery.payload) as { subject: string; text: string };
    const timeoutMs = config.webhooks.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        mail.send({ to: delivery.target, subject, text }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the mail server did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return { delivered: true, status: null };
    } catch (error) {
      return { delivered: false, status: null, error: describeMailFailure(error), retryable: true, retryAfterMs: null };
    } finally {
      clearTimeout(timer);
    }
  }

  private async sendWebhook(delivery: DeliveryRecord): Promise<AttemptResult> {
    const { endpoints, secrets, webhooks } = this.options;
    const endpoint = delivery.endpointId === null ? undefined : await endpoints.find(delivery.endpointId);
    if (endpoint === undefined)
      return { delivered: false, status: null, error: 'the endpoint was deleted', retryable: false, retryAfterMs: null };
    let secret: string;
    try {
      secret = secrets.open(endpoint.secret, endpoint.id);
    } catch (error) {
      return { delivered: false, status: null, error: (error as Error).message, retryable: true, retryAfterMs: null };
    }
    // Signed at each attempt: receivers refuse a timestamp more than five minutes old.
    const sentAt = new Date(this.now());
    const headers = {
      'webhook-id': delivery.id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(delivery.id, sentAt, delivery.payload),
    };
    const outcome: PostOutcome = await webhooks.post(endpoint.url, headers, delivery.payload, this.stopping.signal);
    if (outcome.ok) return { delivered: true, status: outcome.status };
    return { delivered: false, status: outcome.status, error: outcome.error, retryable: true, retryAfterMs: outcome.retryAfterMs };
  }

  /** Deletes what is past keeping, about once an hour on each instance (deletes are idempotent). */
  private async purgeWhenDue(): Promise<void> {
    const now = this.now();
    if (now < this.nextPurgeAt) return;
    this.nextPurgeAt = now + HOUR_MS;
    const before = now - this.options.config.delivery.keepDays * DAY_MS;
    try {
      await this.options.deliveries.purgeFinishedBefore(before, 1_000);
      await this.options.alerts.purgeEndedBefore(before, 1_000);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'old alert deliveries could not be deleted; trying again in an hour');
    }
  }
}

/** An SMTP failure in words: its code and the server's reply code, never the server's URL or credentials. */
function describeMailFailure(error: unknown): string {
  const { code, responseCode, message } = error as { code?: unknown; responseCode?: unknown; message?: unknown };
  if (typeof responseCode === 'number')
    return `the mail server refused the message (SMTP ${responseCode}${typeof code === 'string' ? `, ${code}` : ''})`;
  if (typeof code === 'string') return `the mail could not be sent (${code})`;
  return typeof message === 'string' && message.startsWith('the mail server') ? message : 'the mail could not be sent';
}
