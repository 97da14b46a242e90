/**
 * A start-up failure that is not a config error, said in one sentence naming what to fix (port in use,
 * database missing, Postgres refused...) instead of a raw stack. `serve` wraps what it knows; the
 * process entry prints a `StartupError`'s message alone and exits 1.
 */
import type { Config } from '../config/index.ts';

export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Where a start-up step failed: the sentence names the setting that steers it. */
export type StartupStep = 'storage' | 'listen' | 'operations-listen';

interface SystemErrorLike {
  code?: unknown;
  message?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
  path?: unknown;
}

/** The database URL without its password, for messages. */
function safeDatabaseUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/** The Postgres URL's host:port and database name, for messages. */
function postgresTarget(url: string): { hostPort: string; database: string } {
  try {
    const parsed = new URL(url);
    return {
      hostPort: `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`,
      database: decodeURIComponent(parsed.pathname.slice(1)),
    };
  } catch {
    return { hostPort: safeDatabaseUrl(url), database: '' };
  }
}

/** The public listener's address and its variables, or the operations listener's (OPERATIONS_PORT). */
function listenTarget(config: Config, step: StartupStep): { host: string; port: number; PORT: string; HOST: string } {
  const { host, port, operationsHost, operationsPort } = config.server;
  return step === 'operations-listen'
    ? {
        host: operationsHost ?? host,
        port: operationsPort ?? port,
        PORT: 'OPERATIONS_PORT',
        HOST: operationsHost === undefined ? 'HOST' : 'OPERATIONS_HOST',
      }
    : { host, port, PORT: 'PORT', HOST: 'HOST' };
}

function listenFailure(error: SystemErrorLike, config: Config, step: StartupStep): string | undefined {
  const { host, port, PORT, HOST } = listenTarget(config, step);
  switch (error.code) {
    case 'EADDRINUSE':
      return `Port ${port} on ${host} is already in use by another program: stop it, or set ${PORT} to a free port (e.g. ${PORT}=${port === 8080 ? 8081 : port + 1}).`;
    case 'EACCES':
      return `Not allowed to listen on port ${port}: ports below 1024 need privileges; set ${PORT} to 1024 or above (and put a proxy in front).`;
    case 'EADDRNOTAVAIL':
      return `Cannot listen on ${host}: no network interface of this machine has that address; set ${HOST} to one it has (0.0.0.0 for all).`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Cannot listen on ${host}: the host name does not resolve; set ${HOST} to an address of this machine (0.0.0.0 for all).`;
    default:
      return undefined;
  }
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** A connection failure to Redis (REDIS_URL's port or host named in the error), said as such. */
function redisFailure(error: SystemErrorLike, config: Config): string | undefined {
  if (config.redisUrl === undefined || !CONNECTION_CODES.has(String(error.code))) return undefined;
  let target: URL;
  try {
    target = new URL(config.redisUrl);
  } catch {
    return undefined;
  }
  const port = target.port || '6379';
  if (String(error.port ?? '') !== port && error.hostname !== target.hostname) return undefined;
  return `Redis at ${target.hostname}:${port} cannot be reached (${String(error.code)}): start Redis there, or fix REDIS_URL.`;
}

function storageFailure(error: SystemErrorLike, config: Config): string | undefined {
  const postgres = /^postgres(ql)?:\/\//.test(config.databaseUrl);
  const code = String(error.code ?? '');
  const message = typeof error.message === 'string' ? error.message : '';
  const redis = redisFailure(error, config);
  if (redis !== undefined) return redis;
  if (postgres) {
    const { hostPort, database } = postgresTarget(config.databaseUrl);
    switch (code) {
      case 'ECONNREFUSED':
        return `Postgres refused the connection at ${hostPort}: start Postgres there, or fix the host and port in DATABASE_URL.`;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `Cannot find the Postgres host of DATABASE_URL (${hostPort}): fix the host name, or check this machine's DNS.`;
      case 'ETIMEDOUT':
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        return `Cannot reach Postgres at ${hostPort} (${code}): check the network and firewall, or fix DATABASE_URL.`;
      case '3D000':
        return `The database "${database}" does not exist on ${hostPort}: create it (createdb ${database}) or fix DATABASE_URL.`;
      case '28000':
      case '28P01':
        return `Postgres at ${hostPort} refused the login (${message}): fix the user and password in DATABASE_URL, or the server's pg_hba.conf.`;
      case '42501':
        return `The Postgres user of DATABASE_URL may not create tables in "${database}" (${message}): grant it rights on the database, or use its owner.`;
      default:
        return undefined;
    }
  }
  if (['EACCES', 'EPERM', 'EROFS', 'ENOTDIR'].includes(code) || /SQLITE_CANTOPEN|SQLITE_READONLY|SQLITE_PERM/.test(code)) {
    return `Cannot open the SQLite database ${safeDatabaseUrl(config.databaseUrl)} (${message}): make DATA_DIR (${config.dataDir}) writable by this user, or set DATABASE_URL.`;
  }
  if (code === 'SQLITE_BUSY') {
    return `The SQLite database ${safeDatabaseUrl(config.databaseUrl)} is locked by another process: stop it, or give this instance its own DATA_DIR.`;
  }
  return undefined;
}

/** The one-sentence message for a known start-up failure, or undefined (the caller keeps the raw error). */
export function describeStartupFailure(error: unknown, step: StartupStep, config: Config): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const failure = error as SystemErrorLike;
  return step === 'storage' ? storageFailure(failure, config) : listenFailure(failure, config, step);
}

/** Runs one start-up step; a known failure becomes a StartupError with its sentence. */
export async function startupStep<T>(step: StartupStep, config: Config, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const sentence = describeStartupFailure(error, step, config);
    if (sentence === undefined) throw error;
    throw new StartupError(sentence, { cause: error });
  }
}
