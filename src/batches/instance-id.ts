/**
 * This instance's name in batch leases, kept across restarts in `<dataDir>/instance-id`: a restarted
 * instance frees the leases it held before it died and resumes that work at once, instead of waiting
 * for them to lapse. Instances must not share a data directory unless each sets its own `instanceId`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomAlphanumeric } from '../core/ids.ts';

export function persistedInstanceId(dataDir: string): string {
  const path = join(dataDir, 'instance-id');
  try {
    const stored = readFileSync(path, 'utf8').trim();
    if (/^[A-Za-z0-9._-]{1,64}$/.test(stored)) return stored;
  } catch {
    // First start (or an unreadable file): make a new one below.
  }
  const created = `instance-${randomAlphanumeric(12)}`;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path, `${created}\n`);
  return created;
}
