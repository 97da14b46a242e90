/**
 * Table types of the organizations' storage quota (migration 0200), kept apart from schema.ts, which
 * extends them. Same conventions as schema.ts: integer milliseconds since the epoch, sizes in bytes.
 */

/**
 * Bytes an upload in flight holds against its organization's storage quota: reserved before they are
 * written to the blob store, replaced by the file's row when the upload is recorded (one transaction),
 * deleted when it fails. A row whose `expires_at` has passed belongs to a dead process and counts no more.
 */
export interface StorageReservationsTable {
  /** The upload's file id (`file-...`). */
  id: string;
  organization_id: string;
  /** Bytes reserved so far. */
  bytes: number;
  /** Milliseconds since epoch; renewed by every reservation step. */
  expires_at: number;
}

export interface StorageSchema {
  storage_reservations: StorageReservationsTable;
}
