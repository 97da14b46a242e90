/**
 * The storage quota's counts: bytes an organization stores (its files not deleted and not purged: what
 * the blob store holds for it) and bytes its uploads in flight have reserved. A reservation grows only
 * while stored + reserved stays within the quota, checked and written in one transaction under the
 * organization's lock (organization-lock.ts), so instances sharing the database never pass the quota
 * together; recording the file replaces its reservation in one transaction.
 */
import type { Kysely, Transaction } from 'kysely';
import type { FileRecord, ReserveRequest, StorageFigures, StorageQuotaRecords } from '../../services/files/file-record.ts';

// The figures, the request and the port are the file service's (services/files/file-record.ts).
export type { ReserveRequest, StorageFigures } from '../../services/files/file-record.ts';
import type { DatabaseSchema } from '../schema.ts';
import { FilesRepository } from './files-repository.ts';
import { inOrganizationLock } from './organization-lock.ts';

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

export class StorageQuotaRepository implements StorageQuotaRecords {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Stored and reserved bytes of the organization at `now`. */
  figures(organizationId: string, now: number): Promise<StorageFigures> {
    return StorageQuotaRepository.figuresWith(this.db, organizationId, now);
  }

  /** Both sums in one statement (one round trip inside the reservation's transaction). */
  private static async figuresWith(db: Executor, organizationId: string, now: number): Promise<StorageFigures> {
    const row = await db
      .selectNoFrom((eb) => [
        eb
          .selectFrom('files')
          .select((inner) => inner.fn.coalesce(inner.fn.sum<number | string>('bytes'), inner.lit(0)).as('total'))
          .where('organization_id', '=', organizationId)
          .where('purged_at', 'is', null)
          .where('deleted_at', 'is', null)
          .as('stored'),
        eb
          .selectFrom('storage_reservations')
          .select((inner) => inner.fn.coalesce(inner.fn.sum<number | string>('bytes'), inner.lit(0)).as('total'))
          .where('organization_id', '=', organizationId)
          .where('expires_at', '>', now)
          .as('reserved'),
      ])
      .executeTakeFirstOrThrow();
    return { storedBytes: Number(row.stored), reservedBytes: Number(row.reserved) };
  }

  /**
   * Adds `bytes` to the upload's reservation when stored + reserved + bytes stays within the limit;
   * answers whether it did and the figures it decided on (before the addition).
   */
  async reserve(request: ReserveRequest): Promise<StorageFigures & { granted: boolean }> {
    return inOrganizationLock(this.db, 'storage', request.organizationId, async (transaction) => {
      const figures = await StorageQuotaRepository.figuresWith(transaction, request.organizationId, request.now);
      if (figures.storedBytes + figures.reservedBytes + request.bytes > request.limitBytes) return { ...figures, granted: false };
      const expiresAt = request.now + request.ttlMs;
      await transaction
        .insertInto('storage_reservations')
        .values({ id: request.reservationId, organization_id: request.organizationId, bytes: request.bytes, expires_at: expiresAt })
        .onConflict((conflict) =>
          conflict
            .column('id')
            .doUpdateSet((eb) => ({ bytes: eb('storage_reservations.bytes', '+', request.bytes), expires_at: expiresAt })),
        )
        .execute();
      return { ...figures, granted: true };
    });
  }

  /** Records the uploaded file and drops its reservation, in one transaction (its bytes move from reserved to stored). */
  async record(reservationId: string, file: FileRecord): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      await new FilesRepository(transaction).insert(file);
      await transaction.deleteFrom('storage_reservations').where('id', '=', reservationId).execute();
    });
  }

  /** Drops a reservation (the upload failed; nothing was stored). */
  async release(reservationId: string): Promise<void> {
    await this.db.deleteFrom('storage_reservations').where('id', '=', reservationId).execute();
  }

  /** Deletes lapsed reservations (they no longer count; this only keeps the table small). */
  async sweep(now: number): Promise<number> {
    const result = await this.db.deleteFrom('storage_reservations').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
