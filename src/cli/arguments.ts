/**
 * Minimal argv parsing for the admin CLI: positionals, `--flag value`, `--flag=value` and boolean
 * `--flag`.
 */
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

const BOOLEAN_FLAGS = new Set(['json', 'help', 'password-stdin', 'create-org', 'all', 'clear-overrides']);

export function parseArguments(argv: readonly string[]): ParsedArguments {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (!argument.startsWith('--')) {
      positionals.push(argument);
      continue;
    }
    const body = argument.slice(2);
    const equals = body.indexOf('=');
    if (equals >= 0) {
      flags[body.slice(0, equals)] = body.slice(equals + 1);
    } else if (BOOLEAN_FLAGS.has(body) || index + 1 >= argv.length || argv[index + 1]!.startsWith('--')) {
      flags[body] = true;
    } else {
      flags[body] = argv[++index]!;
    }
  }
  return { positionals, flags };
}
