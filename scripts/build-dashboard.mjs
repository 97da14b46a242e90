#!/usr/bin/env node
// Bundles the dashboard's front end (Preact + htm + uPlot, src/dashboard/pages/) into
// dist/dashboard-assets with esbuild: one minified script and one stylesheet, served by the app.
// Runs as part of `npm run build`, so `npm install` / `npm ci` (prepare) produce the assets offline.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const outdir = 'dist/dashboard-assets';
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { dashboard: 'src/dashboard/pages/main.js' },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  outdir,
  sourcemap: true,
  logLevel: 'warning',
});
console.log(`dashboard assets written to ${outdir}`);
