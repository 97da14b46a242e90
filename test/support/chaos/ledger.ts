/**
 * Ledger exactness: every answer a client received as 200 on a metered route (matched by its
 * `x-request-id`) has exactly one `usage_ledger` row, every batch output line too, and no request id
 * has two rows. Read straight from the private Postgres once the instances have had time to flush.
 */
import pg from 'pg';
import { until } from '../until.ts';

export interface LedgerCheck {
  /** Request ids expected and absent. */
  missing: string[];
  /** Request ids with more than one row, and how many. */
  duplicates: Array<{ requestId: string; rows: number }>;
  /** Rows in the table. */
  rows: number;
}

async function rowCounts(url: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const result = await client.query<{ request_id: string; rows: string }>(
      'SELECT request_id, count(*) AS rows FROM usage_ledger GROUP BY request_id',
    );
    return new Map(result.rows.map((row) => [row.request_id, Number(row.rows)]));
  } finally {
    await client.end();
  }
}

/**
 * Waits up to `waitMs` for every id of `expected` to have a row (the instances flush every second and
 * replay their journals when Postgres is back), then reports what is missing or doubled.
 */
export async function checkLedger(url: string, expected: string[], waitMs: number): Promise<LedgerCheck> {
  let counts = new Map<string, number>();
  await until(
    async () => {
      counts = await rowCounts(url);
      return expected.every((requestId) => counts.has(requestId)) ? true : undefined;
    },
    'the ledger rows',
    waitMs,
    500,
  ).catch(() => undefined);
  counts = await rowCounts(url);
  return {
    missing: expected.filter((requestId) => !counts.has(requestId)),
    duplicates: [...counts].filter(([, rows]) => rows > 1).map(([requestId, rows]) => ({ requestId, rows })),
    rows: [...counts.values()].reduce((sum, rows) => sum + rows, 0),
  };
}
