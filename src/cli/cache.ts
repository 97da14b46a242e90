/**
 * `switchyard cache purge --org O`: deletes every response-cache entry of an organization from the
 * shared store (Redis), which tells every running instance to drop the organization's in-process
 * entries too (services/cache/). Without Redis each instance's cache lives in its own memory, which
 * this command cannot reach: purge through the dashboard (an owner) or its operator API instead.
 */
import { openRedisConnection } from '../limits/redis-connection.ts';
import type { Config } from '../config/index.ts';
import { RedisResponseStore } from '../services/cache/stores/redis-response-store.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';

const USAGE = 'Usage: switchyard cache purge --org <organization>';

export async function cacheCommand(config: Config, parsed: ParsedArguments, print: (text: string) => void): Promise<void> {
  const [action] = parsed.positionals;
  const organization = parsed.flags['org'];
  if (action !== 'purge' || typeof organization !== 'string' || organization === '') throw new CliUsageError(USAGE);
  if (config.redisUrl === undefined || config.redisUrl === '')
    throw new CliUsageError(
      'No REDIS_URL: the response cache lives in each instance\'s memory. Purge it from the dashboard (Usage page, "Purge cache") or POST /dashboard/api/operator/organizations/<id>/cache/purge.',
    );
  // The service's own connection: every command bounded by REDIS_COMMAND_TIMEOUT_MS, so a frozen Redis
  // fails the purge instead of hanging it.
  const bounds = config.dependencies;
  const redis = openRedisConnection(config.redisUrl, {
    commandTimeoutMs: bounds.redisCommandTimeoutMs,
    connectTimeoutMs: bounds.redisConnectTimeoutMs,
    enableOfflineQueue: true,
  });
  try {
    const purged = await new RedisResponseStore(redis, config.redisPrefix).purgeOrganization(organization);
    print(`Purged ${purged} cached answer${purged === 1 ? '' : 's'} of ${organization}; running instances drop their in-process copies.`);
  } finally {
    redis.disconnect();
  }
}
