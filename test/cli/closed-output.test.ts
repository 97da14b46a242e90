// The CLI piped into a reader that stops early (`switchyard orgs show X | head -3`, issue 40 item 10):
// output to a closed pipe (EPIPE) ends the command quietly, with no stack trace, as `head`'s user expects.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TYPESCRIPT_LOADER } from '../support/typescript-loader.ts';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));

{
  const entry = [...TYPESCRIPT_LOADER, 'src/main.ts'];
  test('output into a closed pipe ends the CLI quietly', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-epipe-'));
    try {
      const child = spawn(process.execPath, [...entry, 'help'], {
        cwd: REPOSITORY,
        env: { PATH: process.env['PATH'], DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // The reader goes away before the command writes (as `head` does after its lines).
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
      assert.equal(stderr, '', 'nothing on stderr');
      assert.equal(code, 0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
