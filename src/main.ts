/**
 * Process entry: `switchyard <command>`. Commands: serve (default), migrate, keys, usage, owners, orgs,
 * operators, routes, webhooks, cache. Configuration errors, usage errors and known start-up failures print a
 * clear message and exit 1 without a stack trace.
 */
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig } from './config/index.ts';
import { CliUsageError, parseArguments } from './cli/arguments.ts';
import { cacheCommand } from './cli/cache.ts';
import { keysCommand } from './cli/keys.ts';
import { ownersCommand } from './cli/owners.ts';
import { operatorsCommand, orgsCommand } from './cli/orgs.ts';
import { routesCommand } from './cli/routes.ts';
import { serve } from './cli/serve.ts';
import { nativeModuleMismatchSentence, unsupportedNodeSentence } from './cli/node-support.ts';
import { StartupError } from './cli/startup-failure.ts';
import { usageCommand } from './cli/usage.ts';
import { webhooksCommand } from './cli/webhooks.ts';
import { budgetsCommand } from './cli/budgets.ts';
import { openMigratedDatabase } from './runtime.ts';

const HELP = `Usage: switchyard <command> [options]

Commands:
  serve                         start the HTTP service (default)
  migrate                       apply pending database migrations
  keys create [--org O [--create-org]] [--tier T] [--permissions a,b] [--expires-in 30d] [--name N] [--json]
                                --org must name an existing organization unless --create-org
  keys list [--org O] [--json]
  keys revoke <key id>
  keys update <key id> [--tier T] [--permissions a,b] [--name N]   bounded by the organization's plan
  usage --org O | --all [--since 2026-11-01|30d] [--json]   per-model token totals and cost
  owners create --org O --email E [--role owner|member] [--tiers A,B] [--password-stdin] [--base-url URL]
                                dashboard account; prints a one-time set-password link (24 h)
  owners list --org O | remove --email E | set-role --email E --role owner|member | reset-link --email E
  operators create --email E [--base-url URL]   operator account; prints a set-password link
  orgs list [--search S] | show O | set-plan O --plan T [--overrides JSON | --clear-overrides]
  orgs suspend O | resume O     a suspended organization's keys answer 403, its batches pause
  routes [--model M] [--json]   each model's deployments with their live routing state
  webhooks list | add --url U [--events a,b] [--description D] | remove <id> | test <id>
                                operator webhook endpoints (every organization's budget alerts)
  budgets list | show --org O | set --org O [--key K] --period day|week|month|total --usd X | clear --org O [--key K]
                                money budgets (an organization's overrides its plan's; a key's never above it)
  webhooks deliveries [--org O] [--status pending|delivered|failed] [--limit N]   the alerts' delivery log
  cache purge --org O           delete the organization's response-cache entries on every instance (needs REDIS_URL)

Global options:
  --config <file>               YAML or JSON config file (or SWITCHYARD_CONFIG)
  --environment-file <file>     the service's environment file (systemd EnvironmentFile=, or SWITCHYARD_ENV_FILE);
                                its values go over the environment's. Reading commands never create a database.
Environment: PORT, HOST, DATA_DIR, DATABASE_URL, REDIS_URL, LOG_LEVEL, SWITCHYARD_CONFIG, SMTP_URL, SMTP_FROM, PUBLIC_BASE_URL,
  ALERT_* (README "Budgets and alerts")`;

export async function main(
  argv: readonly string[],
  print: (text: string) => void = (text) => process.stdout.write(`${text}\n`),
): Promise<void> {
  // Node's `engines` check only warns at install: an older Node is refused here, in one sentence.
  const unsupported = unsupportedNodeSentence();
  if (unsupported !== undefined) throw new StartupError(unsupported);
  try {
    return await dispatch(argv, print);
  } catch (error) {
    // better-sqlite3 loads its binary at the first database open: built for another Node, say the fix.
    const mismatch = nativeModuleMismatchSentence(error);
    if (mismatch !== undefined) throw new StartupError(mismatch, { cause: error });
    throw error;
  }
}

async function dispatch(argv: readonly string[], print: (text: string) => void): Promise<void> {
  const parsed = parseArguments(argv);
  const [command = 'serve', ...rest] = parsed.positionals;
  if (parsed.flags['help'] === true || command === 'help') {
    print(HELP);
    return;
  }
  const configFile = parsed.flags['config'];
  const environmentFile = parsed.flags['environment-file'];
  const config = loadConfig({
    ...(typeof configFile === 'string' ? { configFile } : {}),
    ...(typeof environmentFile === 'string' ? { environmentFile } : {}),
  });
  switch (command) {
    case 'serve':
      return serve(config);
    case 'migrate': {
      const database = await openMigratedDatabase(config);
      await database.close();
      print('Migrations applied.');
      return;
    }
    case 'keys':
      return keysCommand(config, { positionals: rest, flags: parsed.flags }, print);
    case 'usage':
      return usageCommand(config, { positionals: rest, flags: parsed.flags }, print);
    case 'owners':
      return ownersCommand(config, { positionals: rest, flags: parsed.flags }, print);
    case 'orgs':
      return orgsCommand(config, { positionals: rest, flags: parsed.flags }, print);
    case 'operators':
      return operatorsCommand(config, { positionals: rest, flags: parsed.flags }, print);
    case 'routes':
      return routesCommand(config, { positionals: rest, flags: parsed.flags }, print);
    case 'webhooks':
      return webhooksCommand(config, { positionals: rest, flags: parsed.flags }, print);
    case 'cache':
      return cacheCommand(config, { positionals: rest, flags: parsed.flags }, print);
    case 'budgets':
      return budgetsCommand(config, { positionals: rest, flags: parsed.flags }, print);
    default:
      throw new CliUsageError(`Unknown command "${command}".\n\n${HELP}`);
  }
}

/**
 * Output into a pipe whose reader has gone (`switchyard orgs list | head -3`) ends the command quietly
 * with 0, as other command-line tools do, instead of an unhandled EPIPE stack. Process entries call it.
 * Not for `serve`: the service never ends on its output alone (it stops with a drain).
 */
export function endQuietlyOnClosedOutput(argv: readonly string[]): void {
  if ((parseArguments(argv).positionals[0] ?? 'serve') === 'serve') return;
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      throw error;
    });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  endQuietlyOnClosedOutput(process.argv.slice(2));
  main(process.argv.slice(2)).catch((error: unknown) => {
    if (error instanceof ConfigError || error instanceof CliUsageError || error instanceof StartupError) {
      process.stderr.write(`${error.message}\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exit(1);
  });
}
