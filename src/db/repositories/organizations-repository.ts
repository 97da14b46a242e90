/**
 * Organizations as the operator sees them: plan, overrides, status, and figures across organizations
 * (members, keys, usage today and this month, last active day). Every write that changes what a key
 * may do (plan, overrides, suspension) bumps `keys_version` in the same transaction, so every
 * instance's key cache drops it within one poll (accounts/authenticator.ts).
 */
import type { Kysely, Transaction } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';

/** The reserved organization operators belong to (not a valid organization id, never listed). */
export const OPERATORS_ORGANIZATION = '_operators';

export type OrganizationStatus = 'active' | 'suspended';

export interface OrganizationRecord {
  id: string;
  name: string;
  /** Milliseconds since epoch. */
  createdAt: number;
  /** Tier name, or null before the start-up backfill. */
  plan: string | null;
  /** JSON text of the overrides, or null. */
  planOverrides: string | null;
  status: OrganizationStatus;
  /** Milliseconds since epoch, or null. */
  suspendedAt: number | null;
  /** JSON array of tier names set by `owners create --tiers` before plans existed, or null. */
  allowedTiers: string | null;
}

export interface OrganizationSummary extends OrganizationRecord {
  members: number;
  /** Keys neither revoked nor expired. */
  activeKeys: number;
  /** Tokens (input + output), requests and US dollars since 00:00 UTC today, and since the 1st of this month. */
  today: { requests: number; tokens: number; costUsd: number };
  month: { requests: number; tokens: number; costUsd: number };
  /** 00:00 UTC of the last day with a request, milliseconds since epoch, or null. */
  lastActiveDay: number | null;
}

/** A key's tier and permissions after a plan change; undefined when the key is unchanged. */
export type KeyNarrowing = (key: { tier: string; permissions: string[] }) => { tier: string; permissions: string[] } | undefined;

interface OrganizationRow {
  id: string;
  name: string;
  created_at: number;
  plan: string | null;
  plan_overrides: string | null;
  status: string;
  suspended_at: number | null;
  allowed_tiers: string | null;
}

function toRecord(row: OrganizationRow): OrganizationRecord {
  return {
    id: row.id,
    name: row.name,
    createdAt: Number(row.created_at),
    plan: row.plan,
    planOverrides: row.plan_overrides,
    status: row.status === 'suspended' ? 'suspended' : 'active',
    suspendedAt: row.suspended_at === null ? null : Number(row.suspended_at),
    allowedTiers: row.allowed_tiers,
  };
}

const DAY_MS = 86_400_000;

export class OrganizationsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  private async bumpKeysVersion(transaction: Transaction<DatabaseSchema>): Promise<void> {
    await transaction
      .updateTable('counters')
      .set((eb) => ({ value: eb('value', '+', 1) }))
      .where('name', '=', 'keys_version')
      .execute();
  }

  private columns() {
    return this.db
      .selectFrom('organizations')
      .select(['id', 'name', 'created_at', 'plan', 'plan_overrides', 'status', 'suspended_at', 'allowed_tiers'])
      .where('id', '!=', OPERATORS_ORGANIZATION);
  }

  async find(id: string): Promise<OrganizationRecord | undefined> {
    const row = await this.columns().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  /** Organizations with their figures, by id; `search` matches part of the id or an owner's email. */
  async list(now: number, search?: string): Promise<OrganizationSummary[]> {
    let query = this.columns().orderBy('id');
    if (search !== undefined && search.trim() !== '') {
      const pattern = `%${search
        .trim()
        .toLowerCase()
        .replace(/[%_\\]/g, (match) => `\\${match}`)}%`;
      query = query.where((eb) =>
        eb.or([
          eb(eb.fn('lower', ['id']), 'like', pattern),
          eb.exists(
            eb
              .selectFrom('owners')
              .select('owners.id')
              .whereRef('owners.organization_id', '=', 'organizations.id')
              .where('owners.email', 'like', pattern),
          ),
        ]),
      );
    }
    const rows = (await query.execute()).map(toRecord);
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
    const date = new Date(now);
    const monthStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    const [members, keys, usage, lastActive] = await Promise.all([
      this.db
        .selectFrom('owners')
        .select(['organization_id', (eb) => eb.fn.countAll<number>().as('total')])
        .where('organization_id', 'in', ids)
        .groupBy('organization_id')
        .execute(),
      this.db
        .selectFrom('api_keys')
        .select(['organization_id', (eb) => eb.fn.countAll<number>().as('total')])
        .where('organization_id', 'in', ids)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .groupBy('organization_id')
        .execute(),
      this.db
        .selectFrom('usage_daily')
        .select((eb) => [
          'organization_id',
          'day_start',
          eb.fn.sum<number>('requests').as('requests'),
          eb.fn.sum<number>(eb('input_tokens', '+', eb.ref('output_tokens'))).as('tokens'),
          eb.fn.sum<number>('cost_usd').as('cost'),
        ])
        .where('organization_id', 'in', ids)
        .where('day_start', '>=', monthStart)
        .groupBy(['organization_id', 'day_start'])
        .execute(),
      this.db
        .selectFrom('usage_daily')
        .select(['organization_id', (eb) => eb.fn.max<number>('day_start').as('last')])
        .where('organization_id', 'in', ids)
        .groupBy('organization_id')
        .execute(),
    ]);
    const count = (list: Array<{ organization_id: string; total: number | string }>) =>
      new Map(list.map((entry) => [entry.organization_id, Number(entry.total)]));
    const memberCounts = count(members);
    const keyCounts = count(keys);
    const lastActiveDays = new Map(lastActive.map((entry) => [entry.organization_id, entry.last === null ? null : Number(entry.last)]));
    return rows.map((row) => {
      const today = { requests: 0, tokens: 0, costUsd: 0 };
      const month = { requests: 0, tokens: 0, costUsd: 0 };
      for (const entry of usage) {
        if (entry.organization_id !== row.id) continue;
        for (const bucket of Number(entry.day_start) >= dayStart ? [today, month] : [month]) {
          bucket.requests += Number(entry.requests);
          bucket.tokens += Number(entry.tokens);
          bucket.costUsd += Number(entry.cost);
        }
      }
      return {
        ...row,
        members: memberCounts.get(row.id) ?? 0,
        activeKeys: keyCounts.get(row.id) ?? 0,
        today,
        month,
        lastActiveDay: lastActiveDays.get(row.id) ?? null,
      };
    });
  }

  /** Organization ids per plan (tier name) set on them, for the start-up check of dropped tiers. */
  async organizationsByPlan(): Promise<Map<string, string[]>> {
    const rows = await this.columns().where('plan', 'is not', null).orderBy('id').execute();
    const byPlan = new Map<string, string[]>();
    for (const row of rows) byPlan.set(row.plan!, [...(byPlan.get(row.plan!) ?? []), row.id]);
    return byPlan;
  }

  /** Organizations per plan (tier name), for the plans page. */
  async countByPlan(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('organizations')
      .select(['plan', (eb) => eb.fn.countAll<number>().as('total')])
      .where('id', '!=', OPERATORS_ORGANIZATION)
      .groupBy('plan')
      .execute();
    return new Map(rows.map((row) => [row.plan ?? '', Number(row.total)]));
  }

  /** Creates the organization when it does not exist yet, on `plan`. */
  async ensure(id: string, plan: string, now: number): Promise<void> {
    await this.db
      .insertInto('organizations')
      .values({ id, name: id, created_at: now, allowed_tiers: null, plan, plan_overrides: null, suspended_at: null })
      .onConflict((conflict) => conflict.column('id').doNothing())
      .execute();
  }

  /**
   * Sets the plan and overrides and narrows the organization's active keys at once (`narrow` gives a
   * key's new tier and permissions), all in one transaction; returns how many keys were narrowed.
   */
  async setPlan(id: string, plan: string, overrides: string | null, narrow: KeyNarrowing): Promise<number> {
    return this.db.transaction().execute(async (transaction) => {
      await transaction.updateTable('organizations').set({ plan, plan_overrides: overrides }).where('id', '=', id).execute();
      const keys = await transaction
        .selectFrom('api_keys')
        .select(['id', 'tier', 'permissions'])
        .where('organization_id', '=', id)
        .where('revoked_at', 'is', null)
        .execute();
      let narrowed = 0;
      for (const key of keys) {
        const change = narrow({ tier: key.tier, permissions: JSON.parse(key.permissions) as string[] });
        if (change === undefined) continue;
        narrowed += 1;
        await transaction
          .updateTable('api_keys')
          .set({ tier: change.tier, permissions: JSON.stringify(change.permissions) })
          .where('id', '=', key.id)
          .execute();
      }
      await this.bumpKeysVersion(transaction);
      return narrowed;
    });
  }

  /** Suspends or reactivates; false when there is no such organization. */
  async setStatus(id: string, status: OrganizationStatus, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('organizations')
        .set({ status, suspended_at: status === 'suspended' ? now : null })
        .where('id', '=', id)
        .where('id', '!=', OPERATORS_ORGANIZATION)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await this.bumpKeysVersion(transaction);
      return true;
    });
  }

  /**
   * Organizations without a plan (made before plans existed), with the tiers their keys have and the
   * tiers `owners create --tiers` allowed them: the start-up backfill picks the plan from these.
   */
  async withoutPlan(): Promise<Array<{ id: string; tiers: string[] }>> {
    const rows = await this.columns().where('plan', 'is', null).execute();
    const result: Array<{ id: string; tiers: string[] }> = [];
    for (const row of rows) {
      const keys = await this.db.selectFrom('api_keys').select('tier').distinct().where('organization_id', '=', row.id).execute();
      const allowed = row.allowed_tiers === null ? [] : (JSON.parse(row.allowed_tiers) as string[]);
      result.push({ id: row.id, tiers: [...keys.map((key) => key.tier), ...allowed] });
    }
    return result;
  }

  /** Sets a plan where none is set yet (safe for instances starting together). */
  async fillPlan(id: string, plan: string): Promise<void> {
    await this.db.updateTable('organizations').set({ plan }).where('id', '=', id).where('plan', 'is', null).execute();
  }
}
