/**
 * Argv parsing for the admin CLI, on node:util `parseArgs` (tokens mode): positionals, `--flag value`,
 * `--flag=value`, boolean `--flag`, and `--` before arguments that only look like flags. Flags are not
 * declared per command: the commands read them by name and answer their own usage errors. The one rule
 * kept on top of parseArgs: a flag that is not one of the boolean flags below takes the next argument as
 * its value unless that argument is itself a `--flag` (then, or at the end, it is `true`, which the
 * commands report as a flag without its value).
 */
import { parseArgs } from 'node:util';

export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}

export interface ParsedArguments {
  positionals: string[];
  flags: Record<string, string | true>;
}

/** The flags that never take a value. */
const BOOLEAN_FLAGS = ['json', 'help', 'password-stdin', 'create-org', 'all', 'clear-overrides'] as const;
const BOOLEAN_OPTIONS = Object.fromEntries(BOOLEAN_FLAGS.map((name) => [name, { type: 'boolean' as const }]));

export function parseArguments(argv: readonly string[]): ParsedArguments {
  // Not strict: every other flag is read as a boolean by parseArgs and given its value below.
  const { tokens } = parseArgs({ args: [...argv], options: BOOLEAN_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  /** The argv index taken as a flag's value, or last kept as a single-dash positional: its other tokens are skipped. */
  let taken = -1;
  for (const token of tokens) {
    if (token.kind === 'option-terminator' || token.index === taken) continue;
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (!token.rawName.startsWith('--')) {
      // A single-dash argument (`-x`, `-5`; parseArgs reads `-abc` as three) is no flag of this CLI: it
      // stays the positional it was written as.
      positionals.push(argv[token.index]!);
      taken = token.index;
      continue;
    }
    if (token.value !== undefined) {
      flags[token.name] = token.value;
      continue;
    }
    const next = argv[token.index + 1];
    if ((BOOLEAN_FLAGS as readonly string[]).includes(token.name) || next === undefined || next.startsWith('--')) {
      flags[token.name] = true;
    } else {
      flags[token.name] = next;
      taken = token.index + 1;
    }
  }
  return { positionals, flags };
}
