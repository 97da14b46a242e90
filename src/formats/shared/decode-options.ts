/**
 * Options every request decoder takes beside the body (defined in core, as the format contract takes
 * them). Decoders stay pure functions of (body, options).
 */

import type { DecodeOptions } from '../../core/generation-format.ts';

export { SPEC_DECODE_OPTIONS, type DecodeOptions, type RequestValidation } from '../../core/generation-format.ts';

/** Highest `temperature` in `compatible` mode (OpenAI's range); the SPEC range ends at 1. */
export const COMPATIBLE_MAX_TEMPERATURE = 2;

/** Highest `temperature` the decoders accept under `options`. */
export function maxTemperature(options: DecodeOptions): number {
  return options.validation === 'compatible' ? COMPATIBLE_MAX_TEMPERATURE : 1;
}
