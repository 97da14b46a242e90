/**
 * Files: upload (streamed to the blob store), list, retrieve, delete, content, expiry; plus the
 * server's own files (batch output, generated images) and signed, expiring links to them.
 * Files belong to an organization; another organization's file answers exactly like a missing one.
 */
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { newId, randomHex } from '../../core/ids.ts';
import { invalidParameter, missingParameter, serverError } from '../../core/service-error.ts';
import type { FileRecord, FileRecords } from './file-record.ts';
import { BlobTooLargeError, type BlobSource, type BlobStore } from '../../files/blob-store.ts';
import { buildSignedFileUrl, checkSignedFileUrl } from '../../files/signed-url.ts';
import { systemClock, type Clock } from '../../limits/clock.ts';
import { fileExpired, fileNotFound, fileTooLarge, signedLinkRefused } from './file-errors.ts';
import type { StorageQuota, StorageUsage, UploadReservation } from './storage-quota.ts';
import { MEDIA_TYPE_BY_EXTENSION, mediaTypeFor } from './media-types.ts';

export { mediaTypeFor } from './media-types.ts';

/** Purposes a client may upload with. */
export const UPLOAD_PURPOSES = ['batch', 'user_data', 'vision', 'assistants'] as const;
/** Every purpose a stored file can have: uploads, batch results (server-written), generated images. */
export type FilePurpose = (typeof UPLOAD_PURPOSES)[number] | 'batch_output' | 'image_output';

/**
 * Server-written files no client lists: generated images (OpenAI keeps them out of its files list; no
 * client knows the purpose). They stay retrievable by id and downloadable through their signed link;
 * `?purpose=image_output` lists them on purpose.
 */
export const UNLISTED_FILE_PURPOSES: readonly FilePurpose[] = ['image_output'];

const DAY_MS = 24 * 60 * 60 * 1000;
/** Batch input and output files expire after 30 days unless asked otherwise (as the OpenAI API does). */
export const BATCH_FILE_LIFETIME_MS = 30 * DAY_MS;
/** Generated images are kept one day by default; links to them usually live much shorter. */
export const IMAGE_FILE_LIFETIME_MS = DAY_MS;
const SIGNING_SECRET_SETTING = 'file_url_signing_secret';
/** A put untouched this long belongs to a dead process (a live one refreshes it every few seconds). */
const ABANDONED_PUT_AFTER_MS = 60 * 60 * 1000;

/** One part of a multipart upload, as the route hands it over. */
export type UploadPart =
  | { kind: 'field'; name: string; value: string }
  | {
      kind: 'file';
      name: string;
      filename: string;
      /** Content type the client declared for the part. */
      mediaType: string;
      content: BlobSource;
      /** True once the multipart parser cut the part at the size limit. */
      isTruncated(): boolean;
    };

export interface FileListOptions {
  /** Cursor: a file id; the page starts after it. */
  after?: string;
  /** 1 to 10,000. */
  limit: number;
  order: 'asc' | 'desc';
  purpose?: string;
}

export interface FileServiceOptions {
  repository: FileRecords;
  store: BlobStore;
  clock?: Clock;
  /** Secret for signed links; when absent one is generated once and kept in the database. */
  signingSecret?: string;
  /** The organizations' storage quotas: uploads reserve their bytes before storing them. Absent: no quota. */
  storage?: StorageQuota;
}

export interface OpenedFile {
  file: FileRecord;
  content: Readable;
}

/** The last path segment, without control characters, at most 255 characters. */
function cleanFilename(filename: string): string {
  const name = [...basename(filename.replaceAll('\\', '/'))]
    .filter((character) => character.charCodeAt(0) >= 0x20 && character.charCodeAt(0) !== 0x7f)
    .join('')
    .slice(0, 255);
  return name === '' ? 'file' : name;
}

async function drain(source: BlobSource): Promise<void> {
  for await (const chunk of source) void chunk;
}

/** Lets what is left of a part's stream flow past unread (no await: the caller is failing the upload). */
function discardRest(source: BlobSource): void {
  if (source instanceof Readable && !source.destroyed) {
    source.on('error', () => undefined);
    source.resume();
  }
}

export class FileService {
  private readonly repository: FileRecords;
  private readonly store: BlobStore;
  private readonly clock: Clock;
  private signingSecret: string | undefined;
  private readonly storage: StorageQuota | undefined;

  constructor(options: FileServiceOptions) {
    this.storage = options.storage;
    this.repository = options.repository;
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.signingSecret = options.signingSecret;
  }

  /** Loads (or creates, once for every instance) the signing secret. */
  async start(): Promise<void> {
    this.signingSecret ??= await this.repository.ensureSetting(SIGNING_SECRET_SETTING, randomHex(64));
  }

  /**
   * Stores an upload: the `file` part is streamed to the blob store as it arrives (parts may come in
   * any order), then `purpose` and `expires_after` are checked. On any failure nothing is kept.
   */
  async upload(organizationId: string, parts: AsyncIterable<UploadPart>, maxBytes: number): Promise<FileRecord> {
    const fields = new Map<string, string>();
    let stored: { id: string; bytes: number; filename: string; declaredType: string } | undefined;
    let tooLarge = false;
    let reservation: UploadReservation | undefined;
    try {
      for await (const part of parts) {
        if (part.kind === 'field') {
          if (!fields.has(part.name)) fields.set(part.name, part.value);
          continue;
        }
        if (part.name !== 'file' || stored !== undefined || tooLarge) {
          await drain(part.content);
          continue;
        }
        const id = newId.file();
        let bytes: number;
        try {
          reservation = await this.storage?.open(organizationId, id);
          bytes = await this.store.put(id, reservation === undefined ? part.content : reservation.meter(part.content), { maxBytes });
        } catch (error) {
          if (reservation?.refusal !== undefined) {
            // The quota refused a chunk before the store saw it (the store may have wrapped the error).
            discardRest(part.content);
            throw reservation.refusal;
          }
          if (!(error instanceof BlobTooLargeError)) {
            // The store refused before reading the part (a breaker open) or stopped half-way: let the
            // rest of the body flow past, or the parser stalls and the answer waits for the idle timeout.
            discardRest(part.content);
            throw error;
          }
          tooLarge = true;
          continue;
        }
        if (part.isTruncated()) {
          await this.store.delete(id);
          tooLarge = true;
          continue;
        }
        stored = { id, bytes, filename: cleanFilename(part.filename), declaredType: part.mediaType };
      }
      if (tooLarge) throw fileTooLarge(maxBytes);
      const purpose = fields.get('purpose');
      if (purpose === undefined || purpose === '') throw missingParameter('purpose');
      if (!(UPLOAD_PURPOSES as readonly string[]).includes(purpose)) {
        const serverOnly =
          purpose === 'batch_output' || purpose === 'image_output' ? ` '${purpose}' files are written by the server only.` : '';
        throw invalidParameter('purpose', `Invalid purpose '${purpose}'.${serverOnly} Use one of: ${UPLOAD_PURPOSES.join(', ')}.`);
      }
      if (stored === undefined) {
        if (fields.has('file')) throw invalidParameter('file', "'file' must be a file part with a filename, not a plain form field.");
        throw missingParameter('file');
      }
      // As OpenAI does: a batch input is JSON Lines, said up front rather than when a batch first reads it.
      if (purpose === 'batch' && !/\.jsonl$/i.test(stored.filename))
        throw invalidParameter(
          'file',
          `Invalid file format for purpose 'batch': '${stored.filename}' is not a .jsonl file. Upload the batch's requests as JSON Lines (one request object per line) in a file named *.jsonl.`,
        );
      const now = this.clock.now();
      const record: FileRecord = {
        id: stored.id,
        organizationId,
        purpose,
        filename: stored.filename,
        bytes: stored.bytes,
        mediaType: mediaTypeFor(purpose, stored.filename, stored.declaredType),
        createdAt: now,
        expiresAt: this.uploadExpiry(purpose, fields, now),
        deletedAt: null,
        purgedAt: null,
      };
      await (reservation === undefined ? this.repository.insert(record) : reservation.record(record));
      return record;
    } catch (error) {
      // The original failure is what the client hears about, even when the clean-up fails too.
      if (stored !== undefined) await this.store.delete(stored.id).catch(() => undefined);
      await reservation?.release().catch(() => undefined);
      throw error;
    }
  }

  /** The organization's stored bytes against its storage quota; undefined when this service has no quotas. */
  storageUsage(organizationId: string): Promise<StorageUsage> | undefined {
    return this.storage?.usage(organizationId);
  }

  /** OpenAI's `expires_after[anchor]=created_at` + `expires_after[seconds]` (3600 to 2592000). */
  private uploadExpiry(purpose: string, fields: Map<string, string>, now: number): number | null {
    const anchor = fields.get('expires_after[anchor]');
    const seconds = fields.get('expires_after[seconds]');
    if (anchor === undefined && seconds === undefined) return purpose === 'batch' ? now + BATCH_FILE_LIFETIME_MS : null;
    if (anchor !== 'created_at') throw invalidParameter('expires_after.anchor', "expires_after.anchor must be 'created_at'.");
    if (seconds === undefined) throw missingParameter('expires_after.seconds');
    const value = Number(seconds);
    if (!/^\d+$/.test(seconds) || value < 3600 || value > 2_592_000) {
      throw invalidParameter('expires_after.seconds', 'expires_after.seconds must be an integer from 3600 (1 hour) to 2592000 (30 days).');
    }
    return now + value * 1000;
  }

  /** A live file of the organization; 404 when unknown, deleted or another organization's; 410 when expired. */
  async retrieve(organizationId: string, fileId: string): Promise<FileRecord> {
    const file = await this.repository.findById(fileId);
    if (file === undefined || file.organizationId !== organizationId || file.deletedAt !== null) throw fileNotFound(fileId);
    if (this.isExpired(file)) throw fileExpired(fileId);
    return file;
  }

  isExpired(file: FileRecord): boolean {
    return file.expiresAt !== null && file.expiresAt <= this.clock.now();
  }

  /** One page of live files (generated images only when asked for by purpose) and whether more follow. */
  async list(organizationId: string, options: FileListOptions): Promise<{ files: FileRecord[]; hasMore: boolean }> {
    let after: { createdAt: number; id: string } | undefined;
    if (options.after !== undefined) {
      const cursor = await this.repository.findById(options.after);
      if (cursor === undefined || cursor.organizationId !== organizationId)
        throw invalidParameter('after', `No file '${options.after}' to continue after.`);
      after = { createdAt: cursor.createdAt, id: cursor.id };
    }
    const rows = await this.repository.list({
      organizationId,
      order: options.order,
      limit: options.limit + 1,
      now: this.clock.now(),
      ...(options.purpose === undefined ? { excludePurposes: UNLISTED_FILE_PURPOSES } : { purpose: options.purpose }),
      ...(after === undefined ? {} : { after }),
    });
    return { files: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
  }

  /** Marks the file deleted and removes its bytes. Expired files may be deleted too. */
  async delete(organizationId: string, fileId: string): Promise<FileRecord> {
    const file = await this.repository.findById(fileId);
    if (file === undefined || file.organizationId !== organizationId || file.deletedAt !== null) throw fileNotFound(fileId);
    const now = this.clock.now();
    if (!(await this.repository.markDeleted(fileId, now))) throw fileNotFound(fileId);
    await this.store.delete(fileId);
    await this.repository.markPurged(fileId, now);
    return { ...file, deletedAt: now, purgedAt: now };
  }

  /** The content of a live file of the organization (same 404/410 rules as `retrieve`). */
  async openContent(organizationId: string, fileId: string): Promise<OpenedFile> {
    const file = await this.retrieve(organizationId, fileId);
    return { file, content: await this.openStored(file) };
  }

  private async openStored(file: FileRecord): Promise<Readable> {
    const content = file.purgedAt === null ? await this.store.get(file.id) : undefined;
    if (content === undefined) {
      if (file.purgedAt !== null) throw fileExpired(file.id);
      throw serverError('internal_error', `The content of file '${file.id}' is missing from storage.`);
    }
    return content;
  }

  /** Writes bytes under a new file id without a row yet (the caller records the row, or discards). */
  async storeBytes(content: BlobSource): Promise<{ id: string; bytes: number }> {
    const id = newId.file();
    const bytes = await this.store.put(id, content);
    return { id, bytes };
  }

  /** Removes bytes written by `storeBytes` that were never recorded. */
  async discardBytes(fileId: string): Promise<void> {
    await this.store.delete(fileId);
  }

  /**
   * Stores a generated image for an organization and returns its file id (purpose `image_output`).
   * @param lifetimeSeconds How long the file is kept; default one day.
   */
  async storeImage(
    bytes: Uint8Array,
    mediaType: string,
    organizationId: string,
    lifetimeSeconds = IMAGE_FILE_LIFETIME_MS / 1000,
  ): Promise<string> {
    const stored = await this.storeBytes([bytes]);
    const now = this.clock.now();
    const extension = Object.entries(MEDIA_TYPE_BY_EXTENSION).find(([, type]) => type === mediaType)?.[0] ?? 'bin';
    try {
      await this.repository.insert({
        id: stored.id,
        organizationId,
        purpose: 'image_output',
        filename: `${stored.id}.${extension}`,
        bytes: stored.bytes,
        mediaType: mediaTypeFor('image_output', '', mediaType),
        createdAt: now,
        expiresAt: now + lifetimeSeconds * 1000,
        deletedAt: null,
        purgedAt: null,
      });
    } catch (error) {
      await this.store.delete(stored.id);
      throw error;
    }
    return stored.id;
  }

  /**
   * A link anyone can fetch without a key until it expires:
   * `<origin>/v1/files/<id>/signed-content?expires=<unix>&signature=<hmac>`.
   * @param origin Scheme, host and port, without `/v1`.
   * @param ttlSeconds Seconds from now until the link stops working.
   */
  signedFileUrl(origin: string, fileId: string, ttlSeconds: number): string {
    const expiresAtSeconds = Math.floor(this.clock.now() / 1000) + Math.max(1, Math.floor(ttlSeconds));
    return buildSignedFileUrl(this.requireSecret(), origin, fileId, expiresAtSeconds);
  }

  /** The content behind a signed link: 403 for a bad or expired link, then the usual 404/410, then 403 while its organization is suspended. */
  async openSignedContent(fileId: string, expires: string | undefined, signature: string | undefined): Promise<OpenedFile> {
    const check = checkSignedFileUrl(this.requireSecret(), fileId, expires, signature, Math.floor(this.clock.now() / 1000));
    if (check === 'invalid') throw signedLinkRefused('invalid_signature');
    if (check === 'expired') throw signedLinkRefused('url_expired');
    const file = await this.repository.findById(fileId);
    if (file === undefined || file.deletedAt !== null) throw fileNotFound(fileId);
    if (this.isExpired(file)) throw fileExpired(fileId);
    // A suspended organization's links serve nothing until it is reactivated (they work again after, until they expire).
    if (await this.repository.organizationSuspended(file.organizationId)) throw signedLinkRefused('organization_suspended');
    return { file, content: await this.openStored(file) };
  }

  private requireSecret(): string {
    if (this.signingSecret === undefined) throw new Error('FileService.start() must run before signed links are made or checked.');
    return this.signingSecret;
  }

  /**
   * Removes the bytes of up to `limit` expired files; returns how many were removed. Also sweeps what
   * puts killed with their process left in the blob store.
   */
  async purgeExpired(limit = 100): Promise<number> {
    await this.store.removeAbandoned(ABANDONED_PUT_AFTER_MS);
    await this.storage?.sweep();
    const now = this.clock.now();
    const expired = await this.repository.findExpiredUnpurged(now, limit);
    for (const file of expired) {
      await this.store.delete(file.id);
      await this.repository.markPurged(file.id, now);
    }
    return expired.length;
  }
}
