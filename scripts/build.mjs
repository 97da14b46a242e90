#!/usr/bin/env node
// `npm run build`: compiles the service (tsc, incremental) and bundles the dashboard, then writes
// dist/.build-complete. `npm start` compares the sources with that stamp, not with a compiled file:
// an incremental tsc leaves an output it did not need to change with its old time, so a compiled
// file can stay older than the sources after a build and would make every start build again.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

for (const step of [['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], ['scripts/build-dashboard.mjs']]) {
  const result = spawnSync(process.execPath, step, { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
writeFileSync('dist/.build-complete', `${new Date().toISOString()}\n`);
