/**
 * This instance's heartbeat row (`instances`): id (the batch-lease worker id), version and start time,
 * renewed every few seconds so the operator's fleet page lists the instances alive. A failed write is
 * retried at the next beat; the row of a stopped instance simply stops being renewed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InstanceRecord } from '../db/repositories/operator-audit-repository.ts';

/** How often the row is renewed, milliseconds; the fleet page counts an instance alive for three beats. */
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

export function startHeartbeat(
  store: { heartbeat(instance: InstanceRecord): Promise<void> },
  instanceId: string,
  now: () => number = Date.now,
): { stop(): void } {
  const startedAt = now();
  const version = serviceVersion();
  const beat = (): void => void store.heartbeat({ id: instanceId, version, startedAt, lastSeenAt: now() }).catch(() => undefined);
  beat();
  const timer = setInterval(beat, HEARTBEAT_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
