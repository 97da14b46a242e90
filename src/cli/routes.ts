/**
 * `switchyard routes [--model M] [--json]`: every model's deployments with their live state (weight,
 * limits, this minute's requests and tokens, in flight, cooldown, time-to-first-token average), read
 * from the shared deployment state (Redis when REDIS_URL is set). Without Redis each server keeps that
 * state in its own memory, which this command cannot see: it then prints the configuration only.
 */
import type { Config } from '../config/index.ts';
import { systemClock, type Clock } from '../limits/clock.ts';
import { createDeploymentState } from '../limits/create-deployment-state.ts';
import type { DeploymentStateStore } from '../limits/deployment-state.ts';
import { deploymentTable } from '../services/generation/routing/deployment-table.ts';
import { deploymentRows, type DeploymentRow } from '../services/generation/routing/deployment-report.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';

export interface RoutesCommandOptions {
  /** The state to read (tests); default: the one the config names. */
  state?: DeploymentStateStore;
  clock?: Clock;
}

export async function routesCommand(
  config: Config,
  parsed: ParsedArguments,
  print: (text: string) => void,
  options: RoutesCommandOptions = {},
): Promise<void> {
  const table = deploymentTable(config);
  const only = parsed.flags['model'];
  if (only === true) throw new CliUsageError('Usage: switchyard routes [--model <model id>] [--json]');
  if (typeof only === 'string' && !table.has(only))
    throw new CliUsageError(`No model with id "${only}". Run switchyard routes to list them.`);
  const shared = config.limitsBackend !== 'memory' && config.redisUrl !== undefined;
  const state =
    options.state ?? (shared ? await createDeploymentState({ backend: config.limitsBackend, redisUrl: config.redisUrl }) : undefined);
  const clock = options.clock ?? systemClock;
  const rows: DeploymentRow[] = [];
  try {
    rows.push(...(await deploymentRows(table, state, clock.now(), typeof only === 'string' ? only : undefined)));
  } finally {
    if (options.state === undefined) await state?.close();
  }
  if (parsed.flags['json'] === true) {
    print(JSON.stringify({ shared_state: state !== undefined, deployments: rows }));
    return;
  }
  if (state === undefined)
    print('No REDIS_URL: each server keeps its routing state in its own memory; showing the configuration only (live figures: /metrics).');
  print(
    'model | strategy | deployment | upstream model | weight | rpm used/limit | tpm used/limit | in flight | cooling until | latency ms',
  );
  const dash = (value: number | string | null | undefined): string => (value === null || value === undefined ? '-' : String(value));
  for (const row of rows) {
    const live = row.live;
    print(
      [
        row.model,
        row.strategy,
        row.deployment,
        row.upstream_model,
        String(Number(row.weight.toFixed(3))),
        `${dash(live?.requests_this_minute)}/${row.requests_per_minute_limit ?? '∞'}`,
        `${dash(live?.tokens_this_minute)}/${row.tokens_per_minute_limit ?? '∞'}`,
        dash(live?.in_flight),
        live === null ? '-' : (live.cooling_until ?? 'healthy'),
        dash(live?.latency_ms),
      ].join(' | '),
    );
  }
}
