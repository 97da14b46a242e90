/**
 * A stored file as the file service owns it (the row; the bytes are in the blob store), and the ports
 * the file service and the storage quota keep their rows through (only the methods they use). The
 * database implements them (db/repositories/files-repository.ts, storage-quota-repository.ts), as it
 * does the usage ledger's `LedgerRecord`; the runtime wires those in. Nothing here imports anything.
 */
export interface FileRecord {
  /** `file-...`. */
  id: string;
  organizationId: string;
  purpose: string;
  filename: string;
  /** Size of the content, bytes. */
  bytes: number;
  /** Content type the content is served with. */
  mediaType: string;
  /** Milliseconds since epoch. */
  createdAt: number;
  /** Milliseconds since epoch after which the file is expired, or null for never. */
  expiresAt: number | null;
  /** Milliseconds since epoch when deleted by its owner, or null. */
  deletedAt: number | null;
  /** Milliseconds since epoch when the bytes were removed from the blob store, or null. */
  purgedAt: number | null;
}

export interface FileListQuery {
  organizationId: string;
  purpose?: string;
  /** Purposes left out of the list (when no `purpose` is asked for). */
  excludePurposes?: readonly string[];
  /** `desc`: newest first. */
  order: 'asc' | 'desc';
  /** Most rows returned. */
  limit: number;
  /** Cursor: rows strictly after this one in the chosen order. */
  after?: { createdAt: number; id: string };
  /** Milliseconds since epoch: files expired at this time are left out. */
  now: number;
  /** Only files whose name or id contains this text (the dashboard's search). */
  search?: string;
}

/** Where file rows and the shared settings are kept (db/repositories/files-repository.ts implements it). */
export interface FileRecords {
  insert(record: FileRecord): Promise<void>;
  /** Whether the file's organization is suspended (its signed links are refused while it is). */
  organizationSuspended(organizationId: string): Promise<boolean>;
  findById(id: string): Promise<FileRecord | undefined>;
  /** Live files of an organization (not deleted, not expired), ordered by creation then id. */
  list(query: FileListQuery): Promise<FileRecord[]>;
  /** Marks a live file deleted; false when it was not live (unknown or already deleted). */
  markDeleted(id: string, now: number): Promise<boolean>;
  markPurged(id: string, now: number): Promise<void>;
  /** Files whose bytes are still stored although they expired before `now`. */
  findExpiredUnpurged(now: number, limit: number): Promise<FileRecord[]>;
  /** The value of a shared setting, storing `valueIfAbsent` when there is none yet (every instance reads back the same winner). */
  ensureSetting(name: string, valueIfAbsent: string): Promise<string>;
}

export interface StorageFigures {
  /** Bytes of the organization's stored files (not deleted, not purged). */
  storedBytes: number;
  /** Bytes held by its uploads in flight (live reservations). */
  reservedBytes: number;
}

export interface ReserveRequest {
  /** The upload's file id. */
  reservationId: string;
  organizationId: string;
  /** Bytes to add to the reservation. */
  bytes: number;
  /** The quota, bytes (> 0). */
  limitBytes: number;
  /** Milliseconds since epoch. */
  now: number;
  /** The reservation lapses this many milliseconds after its last step (a dead process's holds end). */
  ttlMs: number;
}

/** The storage quota's counts (db/repositories/storage-quota-repository.ts implements it). */
export interface StorageQuotaRecords {
  /** Stored and reserved bytes of the organization at `now`. */
  figures(organizationId: string, now: number): Promise<StorageFigures>;
  /**
   * Adds `bytes` to the upload's reservation when stored + reserved + bytes stays within the limit;
   * answers whether it did and the figures it decided on (before the addition).
   */
  reserve(request: ReserveRequest): Promise<StorageFigures & { granted: boolean }>;
  /** Records the uploaded file and drops its reservation, in one transaction (its bytes move from reserved to stored). */
  record(reservationId: string, file: FileRecord): Promise<void>;
  /** Drops a reservation (the upload failed; nothing was stored). */
  release(reservationId: string): Promise<void>;
  /** Deletes lapsed reservations (they no longer count; this only keeps the table small). */
  sweep(now: number): Promise<number>;
}
