#!/usr/bin/env node
// The `switchyard` command: runs the compiled entry point (npm install builds dist/ via `prepare`).
import { endQuietlyOnClosedOutput, main } from '../dist/src/main.js';

endQuietlyOnClosedOutput(process.argv.slice(2));

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(
    `${['ConfigError', 'CliUsageError', 'StartupError'].includes(error?.name) ? error.message : (error?.stack ?? error)}\n`,
  );
  process.exit(1);
});
