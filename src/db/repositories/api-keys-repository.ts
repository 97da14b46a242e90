/**
 * Organizations and API keys. Every key write bumps the `keys_version` counter in the same
 * transaction, so that key caches on every instance notice a change with one cheap read.
 */
import type { ExpressionBuilder, Kysely, Selectable, Transaction } from 'kysely';
import type { ApiKeysTable, DatabaseSchema } from '../schema.ts';
import { inOrganizationLock } from './organization-lock.ts';
import { containsText } from './text-search.ts';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export interface NewApiKey {
  id: string;
  organizationId: string;
  keyHash: string;
  redacted: string;
  name: string | null;
  tier: string;
  permissions: string[];
  /** Milliseconds since epoch. */
  createdAt: number;
  /** Milliseconds since epoch, or null. */
  expiresAt: number | null;
}

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  redacted: string;
  name: string | null;
  tier: string;
  permissions: string[];
  /** Milliseconds since epoch. */
  createdAt: number;
  /** Milliseconds since epoch, or null. */
  expiresAt: number | null;
  /** Milliseconds since epoch, or null while active. */
  revokedAt: number | null;
  /** The organization's plan, overrides (JSON text) and status: read with the key by `findByHash`/`findById` only. */
  organization?: { plan: string | null; planOverrides: string | null; status: string };
}

function toRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    redacted: row.redacted,
    name: row.name,
    tier: row.tier,
    permissions: JSON.parse(row.permissions) as string[],
    createdAt: Number(row.created_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

/** The cap a new key is created under (the organization's plan `maxActiveKeys`). */
export interface ActiveKeyCap {
  /** Most active keys the organization may hold; > 0. */
  maxActive: number;
  /** Milliseconds since epoch: keys expired by then are not active. */
  now: number;
  /** A key left out of the count: the one a rotation replaces (it lapses after its grace period). */
  replacing?: string;
}

/** Not revoked, and not expired at `now`. */
function activeAt(now: number) {
  return (eb: ExpressionBuilder<DatabaseSchema, 'api_keys'>) =>
    eb.and([eb('revoked_at', 'is', null), eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)])]);
}

export class ApiKeysRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  private async bumpVersion(transaction: Transaction<DatabaseSchema>): Promise<void> {
    await transaction
      .updateTable('counters')
      .set((eb) => ({ value: eb('value', '+', 1) }))
      .where('name', '=', 'keys_version')
      .execute();
  }

  /**
   * Creates the organization if it does not exist, then the key, atomically. With a cap, the key is
   * created only while the organization holds fewer active keys than the cap, counted and inserted
   * under the organization's lock (so concurrent creates on any instance stop exactly at the cap);
   * otherwise nothing is written and the answer is `{ refused: { active } }`.
   */
  async create(key: NewApiKey): Promise<ApiKeyRecord>;
  async create(key: NewApiKey, cap: ActiveKeyCap | undefined): Promise<ApiKeyRecord | { refused: { active: number } }>;
  async create(key: NewApiKey, cap?: ActiveKeyCap): Promise<ApiKeyRecord | { refused: { active: number } }> {
    const write = async (transaction: Transaction<DatabaseSchema>): Promise<{ active: number } | undefined> => {
      await transaction
        .insertInto('organizations')
        // A new organization starts on the plan of its first key's tier.
        .values({ id: key.organizationId, name: key.organizationId, created_at: key.createdAt, plan: key.tier })
        .onConflict((conflict) => conflict.column('id').doNothing())
        .execute();
      if (cap !== undefined) {
        let count = transaction
          .selectFrom('api_keys')
          .select((eb) => eb.fn.countAll<number | string>().as('total'))
          .where('organization_id', '=', key.organizationId)
          .where(activeAt(cap.now));
        if (cap.replacing !== undefined) count = count.where('id', '!=', cap.replacing);
        const active = Number((await count.executeTakeFirstOrThrow()).total);
        if (active >= cap.maxActive) return { active };
      }
      await transaction
        .insertInto('api_keys')
        .values({
          id: key.id,
          organization_id: key.organizationId,
          key_hash: key.keyHash,
          redacted: key.redacted,
          name: key.name,
          tier: key.tier,
          permissions: JSON.stringify(key.permissions),
          created_at: key.createdAt,
          expires_at: key.expiresAt,
          revoked_at: null,
        })
        .execute();
      await this.bumpVersion(transaction);
      return undefined;
    };
    // Under a cap, the count and the insert hold the organization's lock (one create at a time per organization).
    const refused =
      cap === undefined ? await this.db.transaction().execute(write) : await inOrganizationLock(this.db, 'keys', key.organizationId, write);
    return refused === undefined ? { ...key, revokedAt: null } : { refused };
  }

  /** How many active keys the organization holds at `now`. */
  async countActive(organizationId: string, now: number): Promise<number> {
    const row = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number | string>().as('total'))
      .where('organization_id', '=', organizationId)
      .where(activeAt(now))
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  /** The key with its organization's plan and status (what the authenticator caches). */
  private withOrganization() {
    return this.db
      .selectFrom('api_keys')
      .leftJoin('organizations', 'organizations.id', 'api_keys.organization_id')
      .selectAll('api_keys')
      .select(['organizations.plan as org_plan', 'organizations.plan_overrides as org_overrides', 'organizations.status as org_status']);
  }

  private static withPlan(
    row: ApiKeyRow & { org_plan: string | null; org_overrides: string | null; org_status: string | null },
  ): ApiKeyRecord {
    return {
      ...toRecord(row),
      organization: { plan: row.org_plan, planOverrides: row.org_overrides, status: row.org_status ?? 'active' },
    };
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.withOrganization().where('api_keys.key_hash', '=', keyHash).executeTakeFirst();
    return row === undefined ? undefined : ApiKeysRepository.withPlan(row);
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.withOrganization().where('api_keys.id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : ApiKeysRepository.withPlan(row);
  }

  /** Changes a key's name, tier or permissions; false when there is no such key. Bumps the version. */
  async update(id: string, changes: { name?: string | null; tier?: string; permissions?: string[] }): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('api_keys')
        .set({
          ...(changes.name === undefined ? {} : { name: changes.name }),
          ...(changes.tier === undefined ? {} : { tier: changes.tier }),
          ...(changes.permissions === undefined ? {} : { permissions: JSON.stringify(changes.permissions) }),
        })
        .where('id', '=', id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await this.bumpVersion(transaction);
      return true;
    });
  }

  /**
   * One page of an organization's keys, newest first (the dashboard's keys page): strictly after the
   * `after` key, only those whose name, prefix or id contains `search` when given.
   */
  async page(
    organizationId: string,
    query: { limit: number; after?: { createdAt: number; id: string }; search?: string },
  ): Promise<ApiKeyRecord[]> {
    let select = this.db.selectFrom('api_keys').selectAll().where('organization_id', '=', organizationId);
    const { after, search } = query;
    if (after !== undefined)
      select = select.where((eb) =>
        eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
      );
    if (search !== undefined)
      select = select.where((eb) => eb.or([containsText('name', search), containsText('redacted', search), containsText('id', search)]));
    const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
    return rows.map(toRecord);
  }

  async list(organizationId?: string): Promise<ApiKeyRecord[]> {
    let query = this.db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id');
    if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
    return (await query.execute()).map(toRecord);
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  /** The tiers of keys not revoked and not expired at `nowMs` (start-up checks the config still has them). */
  async tiersInUse(nowMs: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select('tier')
      .distinct()
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowMs)]))
      .execute();
    return rows.map((row) => row.tier);
  }

  /** Marks the key revoked; returns false if there is no such key or it was already revoked. */
  async revoke(id: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('api_keys')
        .set({ revoked_at: now })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await this.bumpVersion(transaction);
      return true;
    });
  }

  /**
   * Moves an active key's expiry to `expiresAt` unless it already expires sooner (key rotation's grace
   * period); returns false when there is no such active key. Bumps the version so every instance sees it.
   */
  async expireBy(id: string, expiresAt: number): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('api_keys')
        .set({ expires_at: expiresAt })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', expiresAt)]))
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await this.bumpVersion(transaction);
      return true;
    });
  }

  /** Changes whenever any key is created, revoked or rotated. */
  async version(): Promise<number> {
    const row = await this.db.selectFrom('counters').select('value').where('name', '=', 'keys_version').executeTakeFirstOrThrow();
    return Number(row.value);
  }

  /** Every organization's id (created with its first key or its first owner), sorted. */
  async organizationIds(): Promise<string[]> {
    const rows = await this.db.selectFrom('organizations').select('id').orderBy('id').execute();
    return rows.map((row) => row.id);
  }
}
