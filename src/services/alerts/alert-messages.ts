/**
 * What an alert says: the versioned webhook payload (README "Budgets and alerts", event types and
 * payloads) and the plain-text email. Money is formatted from integer micro-USD without floats; every
 * value a person chose (a key's name) is made safe for one line of plain text and a mail subject.
 */
import type { FiredAlert } from './alert-records.ts';

/** The events alerts send, one per rule kind. */
export const ALERT_EVENT_TYPES = ['budget.threshold_reached', 'budget.projected_to_exceed'] as const;
/** Every event type an endpoint may receive: the alerts' and the test button's sample. */
export const WEBHOOK_EVENT_TYPES = [...ALERT_EVENT_TYPES, 'webhook.test'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The payload's `version`: raised when a field changes meaning or goes away (new fields do not raise it). */
export const PAYLOAD_VERSION = 1;

export function eventTypeOf(alert: Pick<FiredAlert, 'thresholdPercent'>): WebhookEventType {
  return alert.thresholdPercent === null ? 'budget.projected_to_exceed' : 'budget.threshold_reached';
}

/** The event id of an alert's payload: `evt_` and the alert id's random part. */
export function eventIdOf(alertId: string): string {
  return `evt_${alertId.slice(alertId.indexOf('_') + 1)}`;
}

/** `1234567` micro-USD -> `$1.234567`; `50000000` -> `$50.00` (at least cents, trailing zeros of smaller units dropped). */
export function formatUsd(microUsd: number): string {
  const sign = microUsd < 0 ? '-' : '';
  const whole = BigInt(Math.trunc(Math.abs(microUsd)));
  const dollars = whole / 1_000_000n;
  const fraction = (whole % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${sign}$${dollars.toLocaleString('en-US')}.${fraction}`;
}

/** A chosen name as one safe line: control, format (bidi) and line-break characters become spaces, at most `max` characters. */
export function oneLine(text: string, max = 100): string {
  const flat = text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const PERIOD_ADJECTIVES = { day: 'daily', week: 'weekly', month: 'monthly', total: 'total' } as const;

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
/** `2025-07-01 00:00 UTC`. */
const readableTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** The webhook body of a fired alert (JSON text, signed as it is). */
export function alertPayload(alert: FiredAlert, keyLabel: string | null): string {
  const data: Record<string, unknown> = {
    organization: alert.organizationId,
    budget: {
      id: alert.budgetId,
      scope: alert.scope,
      key_id: alert.keyId,
      key_name: keyLabel,
      period: alert.period,
      amount_micro_usd: alert.amountMicroUsd,
      period_start: alert.period === 'total' ? null : isoOrNull(alert.periodStart),
      resets_at: isoOrNull(alert.periodEnd),
    },
    spent_micro_usd: alert.spentMicroUsd,
    ...(alert.thresholdPercent === null ? { projected_micro_usd: alert.projectedMicroUsd } : { threshold_percent: alert.thresholdPercent }),
    request_id: alert.requestId,
  };
  return JSON.stringify({
    id: eventIdOf(alert.id),
    type: eventTypeOf(alert),
    version: PAYLOAD_VERSION,
    timestamp: new Date(alert.createdAt).toISOString(),
    data,
  });
}

/** The body of the test button's sample for one endpoint. */
export function testPayload(eventId: string, endpoint: { id: string; organizationId: string | null }, nowMs: number): string {
  return JSON.stringify({
    id: eventId,
    type: 'webhook.test',
    version: PAYLOAD_VERSION,
    timestamp: new Date(nowMs).toISOString(),
    data: {
      organization: endpoint.organizationId,
      endpoint_id: endpoint.id,
      message: 'A test event sent from Switchyard: this endpoint receives budget alerts signed with its secret.',
    },
  });
}

export interface AlertEmail {
  subject: string;
  text: string;
}

/** What the alert is about, in words: `the month budget of key "ci runner" in organization org-acme`. */
function budgetInWords(alert: FiredAlert, keyLabel: string | null): string {
  const period = PERIOD_ADJECTIVES[alert.period];
  const owner =
    alert.scope === 'key'
      ? `key "${oneLine(keyLabel ?? alert.keyId ?? '')}" in organization ${oneLine(alert.organizationId)}`
      : `organization ${oneLine(alert.organizationId)}`;
  return `the ${period} budget of ${owner}`;
}

/** Percent with one decimal, from integers: 81234 of 100000 -> `81.2%`. */
function percentOf(part: number, whole: number): string {
  return `${(Math.floor((part * 1000) / whole) / 10).toFixed(1)}%`;
}

/** The plain-text email of a fired alert, for the organization's owners. */
export function alertEmail(alert: FiredAlert, keyLabel: string | null, operator: string): AlertEmail {
  const what = budgetInWords(alert, keyLabel);
  const headline =
    alert.thresholdPercent === null
      ? `At its current rate, ${what} will be exceeded before it resets.`
      : `${what.charAt(0).toUpperCase()}${what.slice(1)} has reached ${alert.thresholdPercent}% of its amount.`;
  const subject =
    alert.thresholdPercent === null
      ? `Budget alert: ${what} is projected to be exceeded`
      : `Budget alert: ${alert.thresholdPercent}% of ${what} reached`;
  const lines = [
    headline,
    '',
    `Spent:      ${formatUsd(alert.spentMicroUsd)} of ${formatUsd(alert.amountMicroUsd)} (${percentOf(alert.spentMicroUsd, alert.amountMicroUsd)})`,
  ];
  if (alert.projectedMicroUsd !== null) lines.push(`Projected:  ${formatUsd(alert.projectedMicroUsd)} by the end of the period`);
  if (alert.period === 'total' || alert.periodEnd === null) lines.push('Period:     total (it does not reset)');
  else {
    lines.push(`Period:     ${alert.period}, ${readableTime(alert.periodStart)} to ${readableTime(alert.periodEnd)}`);
    lines.push(`Resets at:  ${readableTime(alert.periodEnd)}`);
  }
  lines.push(
    `Budget:     ${oneLine(alert.budgetId)}`,
    '',
    'Each threshold is sent once per period. Requests that would go over the budget are refused until it resets.',
    '',
    `-- ${oneLine(operator)} (Switchyard)`,
  );
  return { subject: oneLine(subject, 200), text: `${lines.join('\n')}\n` };
}
