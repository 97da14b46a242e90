/**
 * Issue 2 benchmark: authenticated GET /v1/models through Switchyard at 50 connections, beside raw
 * node:http serving the same body as a constant, in the same run. Servers run in child processes.
 *
 *   node --import tsx bench/gateway-models.ts [durationSeconds]
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printTable, runLoad, type LoadResult } from './support/load.ts';
import { startProcess, startSwitchyard } from './support/processes.ts';

const durationSeconds = Number(process.argv[2] ?? 5);
const rows: LoadResult[] = [];

// The bootstrap key gets the default tier: Enterprise has no limits to run into (they are still counted).
const configFile = join(tmpdir(), 'switchyard-models-bench.json');
writeFileSync(configFile, JSON.stringify({ defaultTier: 'Enterprise' }));
const switchyard = await startSwitchyard({ SWITCHYARD_CONFIG: configFile });
try {
  const headers = { authorization: `Bearer ${switchyard.key}` };
  const sample = await (await fetch(`${switchyard.origin}/v1/models`, { headers })).text();
  const bodyFile = join(tmpdir(), 'switchyard-models-body.json');
  writeFileSync(bodyFile, sample);
  const baseline = await startProcess('bench/support/constant-server.ts', ['18410', bodyFile], {}, /listening/);
  try {
    await runLoad('warm-up', { url: 'http://127.0.0.1:18410/', durationSeconds: 1 });
    rows.push(
      await runLoad('raw node:http, constant body', { url: 'http://127.0.0.1:18410/', durationSeconds, serverPid: baseline.child.pid! }),
    );
  } finally {
    await baseline.stop();
  }
  await runLoad('warm-up', { url: `${switchyard.origin}/v1/models`, headers, durationSeconds: 1 });
  rows.push(
    await runLoad('switchyard GET /v1/models (auth, limits, _metadata)', {
      url: `${switchyard.origin}/v1/models`,
      headers,
      durationSeconds,
      serverPid: switchyard.child.pid!,
    }),
  );
} finally {
  await switchyard.stop();
}
printTable(`GET /v1/models, 50 connections, ${durationSeconds} s each (${rows.length} runs)`, rows);
