/**
 * Sign-in attempts, the dashboard's throttle shared by every instance. An attempt is reserved (written
 * as a failure) before the slow password check, and only when every subject it counts against is
 * under its limit: the count and the insert are one statement, so concurrent guesses cannot all pass a
 * gate they read before any of them wrote. On Postgres the statement runs behind a transaction-scoped
 * advisory lock per subject (tried in a fixed order; a busy subject is tried again after a pause, see
 * `reserve`), as READ COMMITTED would otherwise let concurrent statements count the same rows; SQLite runs
 * one writing statement at a time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';

/** How long a reservation tries for the locks of subjects other attempts hold (Postgres), ms. */
const RESERVE_WAIT_MS = 10_000;

/** A subject's lock was held by another attempt. */
const BUSY = 'busy';

export interface ThrottleSubject {
  subject: string;
  /** Failures (and attempts in flight) allowed within the window before a new attempt is refused. */
  limit: number;
}

export class SignInAttemptsRepository {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly postgres: boolean,
  ) {}

  /**
   * Reserves one attempt on every subject, all or nothing: the ids of the rows written (counted as
   * failures until `markSucceeded` or `release`), or undefined when a subject already has `limit`
   * failures since `sinceMs`.
   */
  async reserve(subjects: readonly ThrottleSubject[], sinceMs: number, now: number): Promise<number[] | undefined> {
    if (subjects.length === 0) return [];
    const gate = sql.join(
      subjects.map(
        ({ subject, limit }) =>
          sql`(select count(*) from sign_in_attempts where subject = ${subject} and succeeded = 0 and created_at >= ${sinceMs}) < ${limit}`,
      ),
      sql` and `,
    );
    const rows = sql.join(
      subjects.map(({ subject }) => sql`select cast(${subject} as text) as subject`),
      sql` union all `,
    );
    const insert = sql<{ id: number }>`insert into sign_in_attempts (subject, succeeded, created_at)
      select reserved.subject, 0, cast(${now} as bigint) from (${rows}) as reserved where ${gate}
      returning id`;
    if (!this.postgres) {
      const result = await insert.execute(this.db);
      return result.rows.length === subjects.length ? result.rows.map((row) => Number(row.id)) : undefined;
    }
    const ordered = [...new Set(subjects.map(({ subject }) => subject))].sort();
    // The locks are tried, not waited for: thirty guesses at once on one subject waiting in a lock queue
    // each held a pooled connection and a statement, and the last ones ran past the request path's 2 s
    // bound (500s for a client's mistake, seen with two instances on a loaded machine). A subject busy
    // with other attempts is tried again after a short pause, without a connection held, until
    // RESERVE_WAIT_MS has passed; then the attempt is refused like one over the limit (429).
    const deadline = Date.now() + RESERVE_WAIT_MS;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      const reserved = await this.db.transaction().execute(async (transaction) => {
        for (const subject of ordered) {
          const lock = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${subject}, 0)) as locked`.execute(
            transaction,
          );
          if (lock.rows[0]?.locked !== true) return BUSY;
        }
        const result = await insert.execute(transaction);
        return result.rows.length === subjects.length ? result.rows.map((row) => Number(row.id)) : undefined;
      });
      if (reserved !== BUSY) return reserved;
      if (Date.now() >= deadline) return undefined;
      await sleep(pause * (0.5 + Math.random()));
    }
  }

  /** The reserved attempts succeeded: they no longer count as failures. */
  async markSucceeded(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('sign_in_attempts').set({ succeeded: 1 }).where('id', 'in', ids).execute();
  }

  /** The reserved attempts were no guess (e.g. a missing second factor): forget them. */
  async release(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('sign_in_attempts').where('id', 'in', ids).execute();
  }

  /** Failures (and attempts in flight) of a subject since `sinceMs`. Successes reset nothing. */
  async failures(subject: string, sinceMs: number): Promise<number> {
    const row = await this.db
      .selectFrom('sign_in_attempts')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('subject', '=', subject)
      .where('succeeded', '=', 0)
      .where('created_at', '>=', sinceMs)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  /** When the oldest failure of a subject since `sinceMs` happened (it leaves the window first), or undefined. */
  async oldestFailure(subjects: readonly string[], sinceMs: number): Promise<number | undefined> {
    if (subjects.length === 0) return undefined;
    const row = await this.db
      .selectFrom('sign_in_attempts')
      .select((eb) => eb.fn.min<number>('created_at').as('at'))
      .where('subject', 'in', subjects)
      .where('succeeded', '=', 0)
      .where('created_at', '>=', sinceMs)
      .executeTakeFirst();
    return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
  }

  /** Deletes at most `batchSize` attempts older than `beforeMs`; returns how many. */
  async deleteOlderThan(beforeMs: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('sign_in_attempts')
      .where('id', 'in', (eb) => eb.selectFrom('sign_in_attempts').select('id').where('created_at', '<', beforeMs).limit(batchSize))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
