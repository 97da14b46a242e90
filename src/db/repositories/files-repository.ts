/**
 * Stored files (the rows; the bytes are in the blob store) and the shared `settings` values.
 * Works over the database or inside a transaction (`new FilesRepository(transaction)`).
 */
import type { Kysely, Selectable } from 'kysely';
import type { FileListQuery, FileRecord, FileRecords } from '../../services/files/file-record.ts';
import type { DatabaseSchema, FilesTable } from '../schema.ts';
import { containsText } from './text-search.ts';

// The record, the list query and the port are the file service's (services/files/file-record.ts); this repository implements them.
export type { FileListQuery, FileRecord } from '../../services/files/file-record.ts';

function toRecord(row: Selectable<FilesTable>): FileRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    purpose: row.purpose,
    filename: row.filename,
    bytes: Number(row.bytes),
    mediaType: row.media_type,
    createdAt: Number(row.created_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    deletedAt: row.deleted_at === null ? null : Number(row.deleted_at),
    purgedAt: row.purged_at === null ? null : Number(row.purged_at),
  };
}

export class FilesRepository implements FileRecords {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(record: FileRecord): Promise<void> {
    await this.db
      .insertInto('files')
      .values({
        id: record.id,
        organization_id: record.organizationId,
        purpose: record.purpose,
        filename: record.filename,
        bytes: record.bytes,
        media_type: record.mediaType,
        created_at: record.createdAt,
        expires_at: record.expiresAt,
        deleted_at: record.deletedAt,
        purged_at: record.purgedAt,
      })
      .execute();
  }

  /** The row whatever its state (deleted and expired included). */
  /** Whether the file's organization is suspended (its signed links are refused while it is). */
  async organizationSuspended(organizationId: string): Promise<boolean> {
    const row = await this.db.selectFrom('organizations').select('status').where('id', '=', organizationId).executeTakeFirst();
    return row?.status === 'suspended';
  }

  async findById(id: string): Promise<FileRecord | undefined> {
    const row = await this.db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  /** Live files of an organization (not deleted, not expired), ordered by creation then id. */
  async list(query: FileListQuery): Promise<FileRecord[]> {
    const descending = query.order === 'desc';
    let select = this.db
      .selectFrom('files')
      .selectAll()
      .where('organization_id', '=', query.organizationId)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', query.now)]));
    if (query.purpose !== undefined) select = select.where('purpose', '=', query.purpose);
    else if (query.excludePurposes !== undefined && query.excludePurposes.length > 0)
      select = select.where('purpose', 'not in', [...query.excludePurposes]);
    const after = query.after;
    if (after !== undefined) {
      const comparison = descending ? '<' : '>';
      select = select.where((eb) =>
        eb.or([
          eb('created_at', comparison, after.createdAt),
          eb.and([eb('created_at', '=', after.createdAt), eb('id', comparison, after.id)]),
        ]),
      );
    }
    const search = query.search;
    if (search !== undefined) select = select.where((eb) => eb.or([containsText('filename', search), containsText('id', search)]));
    const direction = descending ? 'desc' : 'asc';
    const rows = await select.orderBy('created_at', direction).orderBy('id', direction).limit(query.limit).execute();
    return rows.map(toRecord);
  }

  /** Marks a live file deleted; false when it was not live (unknown or already deleted). */
  async markDeleted(id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('files')
      .set({ deleted_at: now })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async markPurged(id: string, now: number): Promise<void> {
    await this.db.updateTable('files').set({ purged_at: now }).where('id', '=', id).where('purged_at', 'is', null).execute();
  }

  /** Files whose bytes are still stored although they expired before `now`. */
  async findExpiredUnpurged(now: number, limit: number): Promise<FileRecord[]> {
    const rows = await this.db
      .selectFrom('files')
      .selectAll()
      .where('purged_at', 'is', null)
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  /**
   * The value of a shared setting, storing `valueIfAbsent` when there is none yet. Every instance
   * racing here reads back the same winner (insert-if-absent, then read).
   */
  async ensureSetting(name: string, valueIfAbsent: string): Promise<string> {
    await this.db
      .insertInto('settings')
      .values({ name, value: valueIfAbsent })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    const row = await this.db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow();
    return row.value;
  }
}
