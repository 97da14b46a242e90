// Node.js versions (issue 40 item 9): an unsupported Node is refused with one sentence before anything
// runs, and a better-sqlite3 binary built for another Node becomes one sentence naming
// `npm rebuild better-sqlite3`. The real cases run on the machine's other Node (Debian's /usr/bin/node,
// when it is older than 22.12; the suite says so loudly when there is none).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MINIMUM_NODE_VERSION, nativeModuleMismatchSentence, unsupportedNodeSentence } from '../../src/cli/node-support.ts';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
const OTHER_NODE = '/usr/bin/node';
const otherVersion = existsSync(OTHER_NODE) ? execFileSync(OTHER_NODE, ['--version'], { encoding: 'utf8' }).trim() : undefined;
const olderNode = otherVersion !== undefined && unsupportedNodeSentence(otherVersion) !== undefined;
if (!olderNode)
  console.warn(`\n*** SKIPPED: no Node.js older than ${MINIMUM_NODE_VERSION} at ${OTHER_NODE}; the real-process cases did not run ***\n`);

const run = promisify(execFile);

describe('supported Node.js versions', () => {
  test('the minimum is the one package.json engines names', () => {
    const engines = (JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    assert.equal(engines, `>=${MINIMUM_NODE_VERSION}`);
  });

  test('older versions are refused in one sentence; 22.12 and later pass', () => {
    for (const version of ['v18.19.0', 'v20.20.2', 'v22.11.9', 'v21.99.0'])
      assert.equal(
        unsupportedNodeSentence(version),
        `Switchyard needs Node.js 22.12.0 or later and this is Node.js ${version}: install Node.js 22 LTS (then run \`npm rebuild better-sqlite3\` once in the install folder) and start again.`,
      );
    for (const version of ['v22.12.0', 'v22.23.3', 'v23.0.0', 'v24.1.0']) assert.equal(unsupportedNodeSentence(version), undefined);
    assert.equal(unsupportedNodeSentence(), undefined, 'the Node running this test is supported');
  });

  test('other errors are not taken for a native module mismatch', () => {
    assert.equal(nativeModuleMismatchSentence(new Error('SQLITE_CANTOPEN: unable to open database file')), undefined);
    assert.equal(
      nativeModuleMismatchSentence(Object.assign(new Error('x.so: cannot open shared object file'), { code: 'ERR_DLOPEN_FAILED' })),
      undefined,
    );
    assert.equal(nativeModuleMismatchSentence('NODE_MODULE_VERSION 115'), undefined);
  });

  test('on an older Node the CLI and the service refuse with that one sentence and exit 1', { skip: !olderNode }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-old-node-'));
    try {
      for (const args of [['serve'], ['keys', 'list']]) {
        const failure = await run(OTHER_NODE, ['--import', 'tsx', 'src/main.ts', ...args], {
          cwd: REPOSITORY,
          env: { PATH: process.env['PATH'], DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' },
        }).then(
          () => assert.fail(`${args.join(' ')} ran on ${otherVersion}`),
          (error: { code: number; stdout: string; stderr: string }) => error,
        );
        assert.equal(failure.code, 1);
        assert.equal(failure.stdout, '');
        assert.equal(failure.stderr, `${unsupportedNodeSentence(otherVersion)}\n`);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a real better-sqlite3 ABI mismatch becomes one sentence naming npm rebuild better-sqlite3', { skip: !olderNode }, async () => {
    // This checkout's better-sqlite3 is built for this Node; loading it on the other one fails as after a switch.
    const script = `try { new (require('better-sqlite3'))(':memory:'); } catch (error) { process.stdout.write(JSON.stringify({ code: error.code, message: error.message })); }`;
    const { stdout } = await run(OTHER_NODE, ['-e', script], { cwd: REPOSITORY });
    const error = JSON.parse(stdout) as { code: string; message: string };
    assert.match(error.message, /NODE_MODULE_VERSION/);
    const sentence = nativeModuleMismatchSentence(error, otherVersion);
    assert.match(
      sentence ?? '',
      /^better-sqlite3 was built for another Node\.js version \(built for NODE_MODULE_VERSION \d+, Node\.js v20\.\d+\.\d+ needs \d+\): run `npm rebuild better-sqlite3` in the install folder with this Node\.js, then start again\.$/,
    );
  });
});
