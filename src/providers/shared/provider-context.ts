/**
 * What every provider factory receives besides its own config: process-wide services. Kept tiny so
 * that factories stay easy to test; add a field here only when several providers need it.
 */

/** The pino logger methods providers use (structured object first, message second). */
export interface ProviderLogger {
  warn(object: Record<string, unknown>, message: string): void;
  debug(object: Record<string, unknown>, message: string): void;
}

export interface ProviderContext {
  /** Where providers report what they could not honour and what they retried; optional in tests. */
  logger?: ProviderLogger;
}
