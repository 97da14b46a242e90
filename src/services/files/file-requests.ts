/**
 * The `/v1/files` use cases as the routes call them: admit the request (metering/admitted-request.ts),
 * decode what the client sent with the files wire format, do the work on the file service, and answer
 * in that format. The format is a value the route hands in (formats/openai-files), since services may
 * not import `formats/`.
 */
import type { Caller } from '../caller.ts';
import type { ContentAnswer, JsonAnswer } from '../answer.ts';
import { answerAdmittedRequest, withAdmittedRequest, type RequestMetering } from '../metering/admitted-request.ts';
import type { FileListOptions, FileService, OpenedFile, UploadPart } from './file-service.ts';
import type { FileRecord } from './file-record.ts';

/** The files wire format, as these use cases read and write it. */
export interface FilesWire {
  /** Throws the format's 400 unless the upload came as multipart/form-data. */
  checkUploadIsMultipart(multipart: boolean): void;
  decodeListQuery(query: unknown): FileListOptions;
  /** `expires` and `signature` of a signed content link, as sent (the file service checks them). */
  decodeSignedLinkQuery(query: unknown): { expires: string | undefined; signature: string | undefined };
  encodeFile(file: FileRecord): Record<string, unknown>;
  encodeList(files: readonly FileRecord[], hasMore: boolean): Record<string, unknown>;
  encodeDeleted(file: FileRecord): Record<string, unknown>;
}

/** An upload as the HTTP layer reads it: its parts once asked for, and what its parser's errors mean. */
export interface UploadRequest {
  multipart: boolean;
  parts(): AsyncIterable<UploadPart>;
  /** The client's fault behind a parser error (a malformed body), else undefined. */
  clientFault(error: unknown): Error | undefined;
}

export class FileRequests {
  constructor(
    private readonly files: FileService,
    private readonly metering: RequestMetering,
    private readonly wire: FilesWire,
    /** Largest uploaded file, bytes. */
    private readonly uploadLimitBytes: number,
  ) {}

  upload(caller: Caller, upload: UploadRequest): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () => {
      this.wire.checkUploadIsMultipart(upload.multipart);
      let file: FileRecord;
      try {
        file = await this.files.upload(caller.auth.organizationId, upload.parts(), this.uploadLimitBytes);
      } catch (error) {
        throw upload.clientFault(error) ?? error;
      }
      return this.wire.encodeFile(file);
    });
  }

  list(caller: Caller, query: unknown): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () => {
      const page = await this.files.list(caller.auth.organizationId, this.wire.decodeListQuery(query));
      return this.wire.encodeList(page.files, page.hasMore);
    });
  }

  retrieve(caller: Caller, fileId: string): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () =>
      this.wire.encodeFile(await this.files.retrieve(caller.auth.organizationId, fileId)),
    );
  }

  delete(caller: Caller, fileId: string): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () =>
      this.wire.encodeDeleted(await this.files.delete(caller.auth.organizationId, fileId)),
    );
  }

  /** The raw content (no rate-limit headers on the bytes; an error answer carries them). */
  content(caller: Caller, fileId: string): Promise<ContentAnswer> {
    return withAdmittedRequest(this.metering, caller, async (admission) => ({
      ...contentOf(await this.files.openContent(caller.auth.organizationId, fileId), {}),
      admission,
    }));
  }

  /** The raw content through a signed, expiring link: no key, so no admission. */
  async signedContent(fileId: string, query: unknown): Promise<ContentAnswer> {
    const { expires, signature } = this.wire.decodeSignedLinkQuery(query);
    const opened = await this.files.openSignedContent(fileId, expires, signature);
    return contentOf(opened, { 'cache-control': 'private, max-age=300' });
  }
}

function contentOf(opened: OpenedFile, headers: Record<string, string>): ContentAnswer {
  return {
    stream: false,
    content: { mediaType: opened.file.mediaType, bytes: opened.file.bytes, data: opened.content },
    headers: { 'x-content-type-options': 'nosniff', ...headers },
  };
}
