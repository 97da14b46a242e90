#!/usr/bin/env node
// The `switchyard` command: runs the compiled entry point (npm install builds dist/ via `prepare`).
import { main } from '../dist/src/main.js';

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(
    `${['ConfigError', 'CliUsageError', 'StartupError'].includes(error?.name) ? error.message : (error?.stack ?? error)}\n`,
  );
  process.exit(1);
});
