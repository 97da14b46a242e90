// The admin CLI's argv rules (src/cli/arguments.ts, on node:util parseArgs): what every command's
// flags read as, including the cases the commands answer with their own usage errors.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseArguments } from '../../src/cli/arguments.ts';

describe('parseArguments', () => {
  const cases: [argv: string[], positionals: string[], flags: Record<string, string | true>][] = [
    [['keys', 'create', '--org', 'acme', '--tier', 'free', '--json'], ['keys', 'create'], { org: 'acme', tier: 'free', json: true }],
    // A value flag followed by another flag, or last, is `true`: the command reports it without its value.
    [['keys', 'create', '--org', '--json'], ['keys', 'create'], { org: true, json: true }],
    [['routes', '--model'], ['routes'], { model: true }],
    [['--config=/etc/switchyard.json', 'serve'], ['serve'], { config: '/etc/switchyard.json' }],
    // A value may start with a single dash; `=` keeps everything after it.
    [['keys', 'update', 'k1', '--name', '-odd', '--permissions=a,b'], ['keys', 'update', 'k1'], { name: '-odd', permissions: 'a,b' }],
    [['orgs', 'set-plan', 'o1', '--overrides', '{"a":-1}'], ['orgs', 'set-plan', 'o1'], { overrides: '{"a":-1}' }],
    // Boolean flags never take the next argument.
    [['usage', '--all', 'extra', '--clear-overrides', 'x'], ['usage', 'extra', 'x'], { all: true, 'clear-overrides': true }],
    [
      ['owners', 'create', '--password-stdin', '--create-org', '--help', 'y'],
      ['owners', 'create', 'y'],
      { 'password-stdin': true, 'create-org': true, help: true },
    ],
    // Single-dash arguments are no flags of this CLI: positionals as written.
    [['-x', 'keys', '-abc', 'y'], ['-x', 'keys', '-abc', 'y'], {}],
    [['--name', '', 'z'], ['z'], { name: '' }],
    [['keys', '--org', 'a', '--org', 'b'], ['keys'], { org: 'b' }],
    // After `--`, arguments are positionals even when they look like flags.
    [['keys', 'revoke', '--', '--odd-id'], ['keys', 'revoke', '--odd-id'], {}],
  ];
  for (const [argv, positionals, flags] of cases) {
    test(argv.join(' '), () => assert.deepEqual(parseArguments(argv), { positionals, flags }));
  }
});
