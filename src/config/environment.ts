/**
 * The environment layer: every variable the service reads (README "Configuration"), turned into the
 * shape of the config file's fields, so that the schema validates both alike.
 */
import { tracingFromEnvironment } from './tracing-config.ts';
import { ConfigError } from './config-error.ts';

function integerFromEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed))
    throw new ConfigError(`${name}=${value} is not an integer. Set ${name} to a whole number, e.g. ${name}=8080.`);
  return parsed;
}

/** An on/off switch: `on`/`off`, `true`/`false`, `1`/`0`. */
function onOffFromEnv(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = (env[name] ?? '').toLowerCase();
  if (['on', 'true', '1'].includes(value)) return true;
  if (['off', 'false', '0'].includes(value)) return false;
  throw new ConfigError(`${name}=${env[name]} is not on or off. Set ${name}=on or ${name}=off.`);
}

/** TRUST_PROXY: `true`/`false`, a hop count, or comma-separated proxy addresses/CIDRs. */
function trustProxyFromEnv(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

/** The `alerts` section from the ALERT_* variables (config/alerts-config.ts), or undefined when none is set. */
function alertsFromEnvironment(env: NodeJS.ProcessEnv): Record<string, unknown> | undefined {
  const alerts: Record<string, unknown> = {};
  const webhooks: Record<string, unknown> = {};
  const delivery: Record<string, unknown> = {};
  if (env['ALERT_EMAILS']) alerts['emails'] = onOffFromEnv(env, 'ALERT_EMAILS');
  if (env['ALERT_WEBHOOKS_ALLOW_HTTP']) webhooks['allowHttp'] = onOffFromEnv(env, 'ALERT_WEBHOOKS_ALLOW_HTTP');
  if (env['ALERT_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES'])
    webhooks['allowPrivateAddresses'] = onOffFromEnv(env, 'ALERT_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES');
  if (env['ALERT_WEBHOOK_SECRETS_KEY']) webhooks['secretsKey'] = env['ALERT_WEBHOOK_SECRETS_KEY'];
  const timeoutMs = integerFromEnv(env, 'ALERT_WEBHOOK_TIMEOUT_MS');
  if (timeoutMs !== undefined) webhooks['timeoutMs'] = timeoutMs;
  for (const [name, field] of [
    ['ALERT_RETRY_FIRST_MS', 'firstRetryMs'],
    ['ALERT_RETRY_MAX_MS', 'maxRetryMs'],
    ['ALERT_RETRY_FOR_MS', 'retryForMs'],
    ['ALERT_DELIVERY_POLL_MS', 'pollMs'],
  ] as const) {
    const value = integerFromEnv(env, name);
    if (value !== undefined) delivery[field] = value;
  }
  if (Object.keys(webhooks).length > 0) alerts['webhooks'] = webhooks;
  if (Object.keys(delivery).length > 0) alerts['delivery'] = delivery;
  return Object.keys(alerts).length === 0 ? undefined : alerts;
}

export function fromEnvironment(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const server: Record<string, unknown> = {};
  const port = integerFromEnv(env, 'PORT');
  if (port !== undefined) server['port'] = port;
  if (env['HOST']) server['host'] = env['HOST'];
  if (env['PUBLIC_BASE_URL']) server['publicBaseUrl'] = env['PUBLIC_BASE_URL'];
  if (env['TRUST_PROXY']) server['trustProxy'] = trustProxyFromEnv(env['TRUST_PROXY']);
  if (env['LOG_ACCESS']) server['accessLog'] = onOffFromEnv(env, 'LOG_ACCESS');
  if (env['OPERATIONS_TOKEN']) server['operationsToken'] = env['OPERATIONS_TOKEN'];
  const operationsPort = integerFromEnv(env, 'OPERATIONS_PORT');
  if (operationsPort !== undefined) server['operationsPort'] = operationsPort;
  if (env['OPERATIONS_HOST']) server['operationsHost'] = env['OPERATIONS_HOST'];
  for (const [name, field] of [
    ['MAX_CONNECTIONS', 'maxConnections'],
    ['MAX_CONNECTIONS_PER_ADDRESS', 'maxConnectionsPerAddress'],
  ] as const) {
    const value = integerFromEnv(env, name);
    if (value !== undefined) server[field] = value;
  }
  if (env['DRAIN_DELAY_SECONDS']) {
    const delay = Number(env['DRAIN_DELAY_SECONDS']);
    if (!Number.isFinite(delay) || delay < 0) {
      throw new ConfigError(
        `DRAIN_DELAY_SECONDS=${env['DRAIN_DELAY_SECONDS']} is not a number of seconds. Set e.g. DRAIN_DELAY_SECONDS=10.`,
      );
    }
    server['drainDelaySeconds'] = delay;
  }
  const result: Record<string, unknown> = {};
  if (Object.keys(server).length > 0) result['server'] = server;
  if (env['DATA_DIR']) result['dataDir'] = env['DATA_DIR'];
  if (env['DATABASE_URL']) result['databaseUrl'] = env['DATABASE_URL'];
  if (env['REDIS_URL']) result['redisUrl'] = env['REDIS_URL'];
  if (env['REDIS_PREFIX']) result['redisPrefix'] = env['REDIS_PREFIX'];
  if (env['LOG_LEVEL']) result['logLevel'] = env['LOG_LEVEL'];
  if (env['LIMITS_BACKEND']) result['limitsBackend'] = env['LIMITS_BACKEND'];
  if (env['REQUEST_VALIDATION']) result['requestValidation'] = env['REQUEST_VALIDATION'];
  if (env['SWITCHYARD_OPERATOR']) result['operator'] = env['SWITCHYARD_OPERATOR'];
  if (env['FILES_STORE']) result['filesStore'] = env['FILES_STORE'];
  if (env['INSTANCE_ID']) result['instanceId'] = env['INSTANCE_ID'];
  const batches: Record<string, unknown> = {};
  for (const [name, field] of [
    ['BATCH_LEASE_MS', 'leaseMs'],
    ['BATCH_CONCURRENCY', 'concurrency'],
    ['BATCH_CHUNK_SIZE', 'chunkSize'],
    ['BATCH_INTERACTIVE_THRESHOLD', 'interactiveThreshold'],
  ] as const) {
    const value = integerFromEnv(env, name);
    if (value !== undefined) batches[field] = value;
  }
  if (Object.keys(batches).length > 0) result['batches'] = batches;
  const dependencies: Record<string, unknown> = {};
  for (const [name, field] of [
    ['REDIS_COMMAND_TIMEOUT_MS', 'redisCommandTimeoutMs'],
    ['REDIS_CONNECT_TIMEOUT_MS', 'redisConnectTimeoutMs'],
    ['DATABASE_CONNECT_TIMEOUT_MS', 'databaseConnectTimeoutMs'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', 'databaseStatementTimeoutMs'],
    ['DATABASE_REQUEST_TIMEOUT_MS', 'databaseRequestTimeoutMs'],
    ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 'databaseIdleInTransactionTimeoutMs'],
    ['S3_CONNECT_TIMEOUT_MS', 'objectStoreConnectTimeoutMs'],
    ['S3_REQUEST_TIMEOUT_MS', 'objectStoreRequestTimeoutMs'],
    ['CACHED_KEYS_MAX_STALENESS_MS', 'cachedKeysMaxStalenessMs'],
    ['LEDGER_MEMORY_RECORDS', 'ledgerMemoryRecords'],
  ] as const) {
    const value = integerFromEnv(env, name);
    if (value !== undefined) dependencies[field] = value;
  }
  if (Object.keys(dependencies).length > 0) result['dependencies'] = dependencies;
  if (env['LIMITS_ON_STORE_FAILURE']) result['limits'] = { onStoreFailure: env['LIMITS_ON_STORE_FAILURE'] };
  if (env['ROUTING_ON_STORE_FAILURE']) result['routingState'] = { onStoreFailure: env['ROUTING_ON_STORE_FAILURE'] };
  try {
    const tracing = tracingFromEnvironment(env);
    if (tracing !== undefined) result['tracing'] = tracing;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const alerts = alertsFromEnvironment(env);
  if (alerts !== undefined) result['alerts'] = alerts;
  if (env['INVITATIONS_PER_HOUR'] || env['INVITATIONS_PER_DAY'])
    result['invitations'] = {
      ...(env['INVITATIONS_PER_HOUR'] ? { perHour: Number(env['INVITATIONS_PER_HOUR']) } : {}),
      ...(env['INVITATIONS_PER_DAY'] ? { perDay: Number(env['INVITATIONS_PER_DAY']) } : {}),
    };
  if (env['SMTP_URL'] || env['SMTP_FROM'])
    result['smtp'] = { ...(env['SMTP_URL'] ? { url: env['SMTP_URL'] } : {}), ...(env['SMTP_FROM'] ? { from: env['SMTP_FROM'] } : {}) };
  return result;
}
