/**
 * A stored file -> the wire File object. Follows SPEC "File" (id, object, bytes, created_at, filename,
 * purpose, status, status_details) plus `expires_at`, which the OpenAI SDK's FileObject carries.
 * The `/v1/files` routes and the dashboard answer with it.
 */
import { listPage } from '../shared/list-page.ts';

/** What the wire shows of a stored file (services/files `FileRecord` has these fields). */
export interface StoredFileFacts {
  id: string;
  bytes: number;
  /** Milliseconds since epoch (this and `expiresAt`). */
  createdAt: number;
  filename: string;
  purpose: string;
  expiresAt: number | null;
}

export type FileObject = {
  id: string;
  object: 'file';
  /** Size, bytes. */
  bytes: number;
  /** Unix seconds. */
  created_at: number;
  filename: string;
  purpose: string;
  /** `uploaded`, the only value the SPEC gives. */
  status: 'uploaded';
  status_details: string | null;
  /** Unix seconds, or null when the file does not expire. */
  expires_at: number | null;
};

export function toFileObject(file: StoredFileFacts): FileObject {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: Math.floor(file.createdAt / 1000),
    filename: file.filename,
    purpose: file.purpose,
    status: 'uploaded',
    status_details: null,
    expires_at: file.expiresAt === null ? null : Math.floor(file.expiresAt / 1000),
  };
}

/** A page of `GET /v1/files`. */
export function encodeFileList(files: readonly StoredFileFacts[], hasMore: boolean): Record<string, unknown> {
  return listPage(files.map(toFileObject), hasMore);
}

/** The answer of `DELETE /v1/files/{file_id}`. */
export function encodeDeletedFile(file: StoredFileFacts): Record<string, unknown> {
  return { id: file.id, object: 'file', deleted: true };
}
