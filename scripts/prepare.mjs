#!/usr/bin/env node
// `prepare` (run by `npm install` / `npm ci`): builds dist/ in a source checkout with the build tools
// installed. A production install (`npm ci --omit=dev`) has no TypeScript compiler: it ships a prebuilt
// dist/ instead (README "Production install"), so this step then says so and does nothing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// esbuild (the dashboard bundler) tells: node-llama-cpp's peer dependency installs TypeScript even with --omit=dev.
if (!existsSync('src') || !existsSync('node_modules/typescript/bin/tsc') || !existsSync('node_modules/esbuild')) {
  console.log('switchyard: no build here (no src/ or no dev dependencies); `npm start` runs the prebuilt dist/.');
  process.exit(0);
}
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
process.exit(build.status ?? 1);
