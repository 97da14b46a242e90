/**
 * The composition root: opens storage, applies migrations, builds the services and the app from one
 * frozen Config, and closes everything in order on shutdown.
 */
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Authenticator } from './accounts/authenticator.ts';
import { KeyService, type CreatedKey } from './accounts/key-service.ts';
import { buildApp, type BuildAppOptions } from './app.ts';
import type { Config } from './config/index.ts';
import { openDatabase, type Database } from './db/database.ts';
import { InternalCalls } from './http/internal-calls.ts';
import { ApiKeysRepository } from './db/repositories/api-keys-repository.ts';
import { createLimitStore } from './limits/create-limit-store.ts';
import { MeteringService } from './services/metering/metering-service.ts';
import { UsageLedger } from './services/metering/usage-ledger.ts';
import { UsageLedgerRepository } from './db/repositories/usage-ledger-repository.ts';

export interface Runtime {
  config: Config;
  database: Database;
  keys: KeyService;
  app: FastifyInstance;
  internalCalls: InternalCalls;
  /** The key created on the first start of an empty database, if any (printed once by `serve`). */
  bootstrapKey: CreatedKey | undefined;
  /** Stops accepting, lets in-flight requests finish, closes storage. */
  close(): Promise<void>;
}

export interface StartRuntimeOptions extends BuildAppOptions {
  /** Create a first key when the database has none (default: config.bootstrapKey). */
  bootstrapKey?: boolean;
}

/** Opens the database and applies pending migrations (also `switchyard migrate`). */
export async function openMigratedDatabase(config: Config): Promise<Database> {
  const database = openDatabase(config.databaseUrl);
  try {
    await database.migrate();
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

export async function startRuntime(config: Config, options: StartRuntimeOptions = {}): Promise<Runtime> {
  const database = await openMigratedDatabase(config);
  const repository = new ApiKeysRepository(database.db);
  const keys = new KeyService(config, repository);
  const authenticator = new Authenticator(repository);
  await authenticator.start();
  let bootstrapKey: CreatedKey | undefined;
  if ((options.bootstrapKey ?? config.bootstrapKey) && (await repository.count()) === 0) {
    bootstrapKey = await keys.create({ name: 'bootstrap' });
  }
  const logger = options.logger ?? pino({ level: config.logLevel });
  const limitStore = createLimitStore(config.redisUrl === undefined ? {} : { redisUrl: config.redisUrl });
  const ledger = new UsageLedger({ sink: new UsageLedgerRepository(database.db), logger });
  const metering = new MeteringService(config, limitStore, ledger);
  const internalCalls = new InternalCalls();
  const app = await buildApp({ config, database, authenticator, metering, internalCalls }, { ...options, logger });
  let closing: Promise<void> | undefined;
  return {
    config,
    database,
    keys,
    app,
    internalCalls,
    bootstrapKey,
    close() {
      closing ??= (async () => {
        await app.close();
        authenticator.stop();
        // In-flight requests are done: every ledger record is written before storage closes.
        await ledger.close().catch((error: unknown) => logger.error({ err: error }, 'usage ledger could not be flushed'));
        await limitStore.close();
        await database.close();
      })();
      return closing;
    },
  };
}
