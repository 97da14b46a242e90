/**
 * The instance heartbeat's figures: how often each instance renews its `instances` row (the one
 * heartbeat, written by config-agreement.ts) and the version it publishes there. The operator's fleet
 * page and config agreement both count an instance alive for three beats.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How often the row is renewed, milliseconds; an instance silent for three beats is gone. */
export const HEARTBEAT_INTERVAL_MS = 5_000;

/** package.json's version, found from this file whether run from src/ or dist/src/. */
export function serviceVersion(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) return 'unknown';
    directory = parent;
  }
  return (JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
}
