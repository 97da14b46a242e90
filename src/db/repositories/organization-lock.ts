/**
 * One organization's count-then-write transactions in turn (the key cap, the storage quota), so that
 * two instances can never both pass the check. Within a process they queue in memory, one transaction
 * per organization and purpose at a time, so a burst (100 key creates at once) waits in the queue and
 * not in the connection pool, whose waits are bounded. Across processes a Postgres transaction-scoped
 * advisory lock on the organization and purpose serializes them (released at commit or rollback; plain
 * reads are never blocked). On SQLite the one connection per process already runs transactions in turn.
 */
import { PostgresAdapter, sql, type Kysely, type Transaction } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';

export type LockPurpose = 'keys' | 'storage';

/** Per database handle (one per runtime): the tail of each organization's queue. */
const queues = new WeakMap<Kysely<DatabaseSchema>, Map<string, Promise<unknown>>>();

/** Runs `work` in a transaction holding the organization's lock for `purpose`; resolves to its answer. */
export function inOrganizationLock<T>(
  db: Kysely<DatabaseSchema>,
  purpose: LockPurpose,
  organizationId: string,
  work: (transaction: Transaction<DatabaseSchema>) => Promise<T>,
): Promise<T> {
  let tails = queues.get(db);
  if (tails === undefined) {
    tails = new Map();
    queues.set(db, tails);
  }
  const name = `${purpose}:${organizationId}`;
  const previous = tails.get(name) ?? Promise.resolve();
  const run = previous.then(
    () => runLocked(db, name, work),
    () => runLocked(db, name, work),
  );
  const tail = run.catch(() => undefined);
  tails.set(name, tail);
  void tail.then(() => {
    if (tails.get(name) === tail) tails.delete(name);
  });
  return run;
}

function runLocked<T>(
  db: Kysely<DatabaseSchema>,
  name: string,
  work: (transaction: Transaction<DatabaseSchema>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (transaction) => {
    if (transaction.getExecutor().adapter instanceof PostgresAdapter)
      await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(transaction);
    return work(transaction);
  });
}
