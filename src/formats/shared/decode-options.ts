/**
 * Options every request decoder takes beside the body. Decoders stay pure functions of (body, options):
 * the edge reads the setting from the config once and hands the same object to every route.
 */

/**
 * `spec` (default) applies every SPEC rule as written; `compatible` accepts what the upstream APIs
 * accept where the SPEC is stricter (README "Request validation" lists each relaxation).
 */
export type RequestValidation = 'spec' | 'compatible';

export interface DecodeOptions {
  validation: RequestValidation;
}

/** The options a decoder uses when the caller gives none: strict SPEC validation. */
export const SPEC_DECODE_OPTIONS: DecodeOptions = Object.freeze({ validation: 'spec' });

/** Highest `temperature` in `compatible` mode (OpenAI's range); the SPEC range ends at 1. */
export const COMPATIBLE_MAX_TEMPERATURE = 2;

/** Highest `temperature` the decoders accept under `options`. */
export function maxTemperature(options: DecodeOptions): number {
  return options.validation === 'compatible' ? COMPATIBLE_MAX_TEMPERATURE : 1;
}
