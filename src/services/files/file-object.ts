/**
 * FileRecord -> the wire File object. Follows SPEC "File" (id, object, bytes, created_at, filename,
 * purpose, status, status_details) plus `expires_at`, which the OpenAI SDK's FileObject carries.
 */
import type { FileRecord } from './file-record.ts';

export interface FileObject {
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
}

export function toFileObject(file: FileRecord): FileObject {
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
