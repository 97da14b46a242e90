/**
 * A stored file as the file service owns it (the row; the bytes are in the blob store). The database
 * layer implements its storage (db/repositories/files-repository.ts), as it does the usage ledger's
 * `LedgerRecord`.
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
