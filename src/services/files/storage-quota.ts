/**
 * The storage quota per organization (bytes of stored files, from its plan): uploads reserve their
 * bytes as they stream in, before they reach the blob store, in steps checked against the quota in the
 * database (db/repositories/storage-quota-repository.ts), so uploads racing through any number of
 * instances never store past it. Recording the file turns its reservation into stored bytes; a failed
 * upload releases it; a dead process's reservation lapses `RESERVATION_TTL_MS` after its last step.
 * The server's own files (batch results, generated images) are counted once recorded, never refused.
 */
import type { StorageQuotaRecords } from './file-record.ts';
import type { BlobSource } from '../../files/blob-store.ts';
import type { Clock } from '../../limits/clock.ts';
import type { ServiceError } from '../../core/service-error.ts';
import type { FileRecord } from './file-record.ts';
import { storageQuotaExceeded } from './file-errors.ts';

/**
 * Reservations grow ahead of the bytes (fewer round trips): by as much as is already reserved (so a
 * large upload takes a few steps, not one per MiB), at least 1 MiB and at most 8 MiB; when the quota has
 * less room than that, by what is left, and never by less than the bytes that arrived.
 */
export const RESERVATION_STEP_BYTES = 1024 * 1024;
export const RESERVATION_MAX_STEP_BYTES = 8 * 1024 * 1024;
/** A reservation not renewed for this long belongs to a dead process and no longer counts. */
export const RESERVATION_TTL_MS = 15 * 60 * 1000;

/** Where the quota comes from: the organization's plan (accounts/plans.ts `storageQuotaBytes`). */
export interface StorageQuotaLimits {
  /** The organization's quota in bytes; 0: unlimited. */
  quotaBytes(organizationId: string): Promise<number>;
}

export interface StorageUsage {
  /** Bytes of the organization's stored files. */
  storedBytes: number;
  /** Bytes held by its uploads in progress. */
  reservedBytes: number;
  /** Its quota; 0: unlimited. */
  limitBytes: number;
}

function asBuffer(chunk: Uint8Array | string): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk);
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** One upload's hold on the quota. */
export class UploadReservation {
  private reservedBytes = 0;
  /** Set when the quota refused the upload (the blob store may wrap the error it saw). */
  refusal: ServiceError | undefined;

  constructor(
    private readonly repository: StorageQuotaRecords,
    private readonly clock: Clock,
    private readonly reservationId: string,
    private readonly organizationId: string,
    /** 0: unlimited (nothing reserved). */
    private readonly limitBytes: number,
  ) {}

  /** The source, with each chunk's bytes reserved before the chunk is handed on. */
  meter(source: BlobSource): BlobSource {
    if (this.limitBytes === 0) return source;
    return this.reservedChunks(source);
  }

  private async *reservedChunks(source: BlobSource): AsyncGenerator<Buffer> {
    let seenBytes = 0;
    for await (const chunk of source) {
      const buffer = asBuffer(chunk);
      seenBytes += buffer.length;
      if (seenBytes > this.reservedBytes) await this.reserveUpTo(seenBytes);
      yield buffer;
    }
  }

  /** Grows the reservation to at least `bytes`: a step ahead when the quota has room, else exactly. */
  private async reserveUpTo(bytes: number): Promise<void> {
    const needed = bytes - this.reservedBytes;
    const ahead = Math.max(needed, Math.min(RESERVATION_MAX_STEP_BYTES, Math.max(RESERVATION_STEP_BYTES, this.reservedBytes)));
    let result = await this.add(ahead);
    if (!result.granted) {
      const free = this.limitBytes - result.storedBytes - result.reservedBytes;
      if (free >= needed && free < ahead) result = await this.add(free);
      if (!result.granted) {
        this.refusal = storageQuotaExceeded({
          limitBytes: this.limitBytes,
          storedBytes: result.storedBytes,
          reservedBytes: Math.max(0, result.reservedBytes - this.reservedBytes),
          uploadBytes: bytes,
        });
        throw this.refusal;
      }
    }
  }

  private async add(bytes: number): Promise<{ granted: boolean; storedBytes: number; reservedBytes: number }> {
    const result = await this.repository.reserve({
      reservationId: this.reservationId,
      organizationId: this.organizationId,
      bytes,
      limitBytes: this.limitBytes,
      now: this.clock.now(),
      ttlMs: RESERVATION_TTL_MS,
    });
    if (result.granted) this.reservedBytes += bytes;
    return result;
  }

  /** Records the file, replacing the reservation (one transaction). */
  record(file: FileRecord): Promise<void> {
    return this.repository.record(this.reservationId, file);
  }

  /** Gives the reserved bytes back (the upload failed). */
  async release(): Promise<void> {
    if (this.reservedBytes > 0) await this.repository.release(this.reservationId);
    this.reservedBytes = 0;
  }
}

export class StorageQuota {
  constructor(
    private readonly repository: StorageQuotaRecords,
    private readonly limits: StorageQuotaLimits,
    private readonly clock: Clock,
  ) {}

  /** A hold for one upload of the organization under its current quota. */
  async open(organizationId: string, reservationId: string): Promise<UploadReservation> {
    const limitBytes = await this.limits.quotaBytes(organizationId);
    return new UploadReservation(this.repository, this.clock, reservationId, organizationId, limitBytes);
  }

  /** The organization's stored and reserved bytes against its quota (dashboard, CLI). */
  async usage(organizationId: string): Promise<StorageUsage> {
    const [figures, limitBytes] = await Promise.all([
      this.repository.figures(organizationId, this.clock.now()),
      this.limits.quotaBytes(organizationId),
    ]);
    return { ...figures, limitBytes };
  }

  /** Deletes lapsed reservations (housekeeping beside the expired files' purge). */
  sweep(): Promise<number> {
    return this.repository.sweep(this.clock.now());
  }
}
