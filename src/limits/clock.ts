/**
 * The time source of the limit stores and the usage ledger. Injected everywhere so that tests can
 * stand at 23:59:59 on the last day of a month and step over the boundary without waiting.
 */
export interface Clock {
  /** Current time, milliseconds since the Unix epoch (UTC). */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
