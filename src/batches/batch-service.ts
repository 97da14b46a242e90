/**
 * The batch API's use cases: create (checks, then `validating`), retrieve, list and cancel. The work
 * itself is done by the BatchWorker; this only records what was asked and nudges it.
 */
import type { AuthContext } from '../services/caller-identity.ts';
import type { Permission } from '../config/index.ts';
import { newId } from '../core/ids.ts';
import { invalidFormat, invalidParameter, isServiceError, permissionDenied, type ServiceError } from '../core/service-error.ts';
import type { BatchStore } from './batch-store.ts';
import { systemClock, type Clock } from '../limits/clock.ts';
import type { FileService } from '../services/files/file-service.ts';
import {
  batchApiNotAllowed,
  batchNotFound,
  cannotCancel,
  concurrentBatchesLimit,
  invalidEndpoint,
  invalidInputFile,
  missingRequiredField,
} from './batch-errors.ts';
import { BATCH_STATUSES, type BatchRecord, type BatchStatus } from './batch-records.ts';

export type { BatchStatus };

/** SPEC: batch processing is supported for these endpoints. */
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/embeddings', '/v1/responses'] as const;
/** The permission each batch endpoint needs, the same one its synchronous route asks for. */
const ENDPOINT_PERMISSIONS: Readonly<Record<(typeof BATCH_ENDPOINTS)[number], Permission>> = {
  '/v1/chat/completions': 'chat.completions',
  '/v1/embeddings': 'embeddings',
  '/v1/responses': 'responses',
};
/** SPEC "Limits": every batch finishes within 24 hours. */
export const COMPLETION_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface BatchServiceOptions {
  repository: BatchStore;
  files: FileService;
  /** Tier settings by name; `concurrentBatches` 0 means no batch API. */
  tiers: Readonly<Record<string, { concurrentBatches: number }>>;
  clock?: Clock;
  /** Called when a batch has new work (created or canceled), to wake the worker. */
  onWork?: () => void;
}

export interface BatchListOptions {
  /** Cursor: a batch id; the page starts after it. */
  after?: string;
  /** 1 to 100. */
  limit: number;
  status?: BatchStatus;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Metadata as the OpenAI API takes it: at most 16 pairs, keys up to 64 and values up to 512 characters. */
function checkMetadata(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw invalidParameter('metadata', 'metadata must be an object of string values.');
  const entries = Object.entries(value);
  if (entries.length > 16) throw invalidParameter('metadata', 'metadata may hold at most 16 key-value pairs.');
  for (const [key, entry] of entries) {
    if (key.length > 64) throw invalidParameter(`metadata.${key}`, 'metadata keys may be at most 64 characters long.');
    if (typeof entry !== 'string') throw invalidParameter(`metadata.${key}`, 'metadata values must be strings.');
    if (entry.length > 512) throw invalidParameter(`metadata.${key}`, 'metadata values may be at most 512 characters long.');
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

function requiredString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw missingRequiredField(field);
  if (typeof value !== 'string') throw invalidParameter(field, `${field} must be a string.`);
  if (value === '') throw missingRequiredField(field);
  return value;
}

export class BatchService {
  private readonly repository: BatchStore;
  private readonly files: FileService;
  private readonly tiers: Readonly<Record<string, { concurrentBatches: number }>>;
  private readonly clock: Clock;
  private readonly onWork: () => void;

  constructor(options: BatchServiceOptions) {
    this.repository = options.repository;
    this.files = options.files;
    this.tiers = options.tiers;
    this.clock = options.clock ?? systemClock;
    this.onWork = options.onWork ?? (() => undefined);
  }

  /**
   * Every batch call: the tier must allow batches (SPEC: the Free tier gets `batch_api_not_allowed`,
   * whatever its key's permissions), then the key needs the `batches` permission. Returns the tier's
   * concurrent-batch limit.
   */
  private authorize(auth: AuthContext): number {
    const refusal = this.refusal(auth);
    if (refusal !== undefined) throw refusal;
    return this.concurrentBatches(auth);
  }

  /** The organization's plan decides (accounts/plans.ts); without one, the key's tier. */
  private concurrentBatches(auth: AuthContext): number {
    return auth.limits?.concurrentBatches ?? this.tiers[auth.tier]?.concurrentBatches ?? 0;
  }

  /**
   * Why `auth` may not use batches (also asked before each line of a running batch), or undefined.
   * SPEC: a key on a tier without batches (Free) is refused whatever its organization's plan; so is
   * every key of a plan without batches.
   */
  refusal(auth: AuthContext): ServiceError | undefined {
    if ((this.tiers[auth.tier]?.concurrentBatches ?? 0) === 0) return batchApiNotAllowed(auth.tier);
    if (this.concurrentBatches(auth) === 0) return batchApiNotAllowed(auth.limits?.plan ?? auth.tier);
    if (!auth.permissions.has('batches')) return permissionDenied('batches');
    return undefined;
  }

  /**
   * Why `auth` may not run a line of `endpoint` (the key lacks that endpoint's permission), or
   * undefined: asked at creation and before every line, with the key's current permissions, so a
   * batch is never a way around a permission its key does not have (or no longer has).
   */
  endpointRefusal(auth: AuthContext, endpoint: string): ServiceError | undefined {
    const permission = ENDPOINT_PERMISSIONS[endpoint as (typeof BATCH_ENDPOINTS)[number]] as Permission | undefined;
    if (permission === undefined) return invalidEndpoint(endpoint, BATCH_ENDPOINTS);
    return auth.permissions.has(permission) ? undefined : permissionDenied(permission);
  }

  /** POST /v1/batches: checks the request, records the batch as `validating` with zero counts. */
  async create(auth: AuthContext, body: unknown): Promise<BatchRecord> {
    const limit = this.authorize(auth);
    if (!isPlainObject(body))
      throw invalidFormat(null, 'The request body must be a JSON object with input_file_id, endpoint and completion_window.');
    const inputFileId = requiredString(body, 'input_file_id');
    const endpoint = requiredString(body, 'endpoint');
    const completionWindow = requiredString(body, 'completion_window');
    if (!(BATCH_ENDPOINTS as readonly string[]).includes(endpoint)) throw invalidEndpoint(endpoint, BATCH_ENDPOINTS);
    const endpointRefusal = this.endpointRefusal(auth, endpoint);
    if (endpointRefusal !== undefined) throw endpointRefusal;
    if (completionWindow !== '24h') throw invalidParameter('completion_window', "completion_window must be '24h'.");
    const metadata = checkMetadata(body['metadata']);
    await this.checkInputFile(auth.organizationId, inputFileId);

    const now = this.clock.now();
    const batch: BatchRecord = {
      id: newId.batch(),
      organizationId: auth.organizationId,
      keyId: auth.keyId,
      endpoint,
      inputFileId,
      completionWindow,
      status: 'validating',
      metadata,
      errors: null,
      outputFileId: null,
      errorFileId: null,
      total: 0,
      completed: 0,
      failed: 0,
      createdAt: now,
      expiresAt: now + COMPLETION_WINDOW_MS,
      inProgressAt: null,
      finalizingAt: null,
      completedAt: null,
      failedAt: null,
      expiredAt: null,
      cancellingAt: null,
      cancelledAt: null,
      resultsWritten: false,
      leaseOwner: null,
      leaseExpiresAt: null,
      stepAttempts: 0,
    };
    await this.repository.insert(batch);
    if ((await this.repository.activeRank(auth.organizationId, batch)) > limit) {
      await this.repository.delete(batch.id);
      throw concurrentBatchesLimit(limit, (await this.repository.earliestActiveExpiry(auth.organizationId)) ?? batch.expiresAt);
    }
    this.onWork();
    return batch;
  }

  private async checkInputFile(organizationId: string, fileId: string): Promise<void> {
    try {
      const file = await this.files.retrieve(organizationId, fileId);
      if (file.purpose !== 'batch')
        throw invalidInputFile(fileId, `its purpose is '${file.purpose}'; upload the input with purpose 'batch'.`);
    } catch (error) {
      if (isServiceError(error) && error.code === 'file_not_found')
        throw invalidInputFile(fileId, 'no such file (or it belongs to another organization).');
      if (isServiceError(error) && error.code === 'file_expired') throw invalidInputFile(fileId, 'the file has expired.');
      throw error;
    }
  }

  /** The organization's batch; 404 `batch_not_found` for unknown ids and other organizations' batches. */
  async retrieve(auth: AuthContext, batchId: string): Promise<BatchRecord> {
    this.authorize(auth);
    return this.find(auth.organizationId, batchId);
  }

  private async find(organizationId: string, batchId: string): Promise<BatchRecord> {
    const batch = await this.repository.findById(batchId);
    if (batch === undefined || batch.organizationId !== organizationId) throw batchNotFound(batchId);
    return batch;
  }

  /** One page of the organization's batches, newest first, and whether more follow. */
  async list(auth: AuthContext, options: BatchListOptions): Promise<{ batches: BatchRecord[]; hasMore: boolean }> {
    this.authorize(auth);
    const organizationId = auth.organizationId;
    if (options.status !== undefined && !BATCH_STATUSES.includes(options.status)) {
      throw invalidParameter('status', `status must be one of: ${BATCH_STATUSES.join(', ')}.`);
    }
    let after: { createdAt: number; id: string } | undefined;
    if (options.after !== undefined) {
      const cursor = await this.repository.findById(options.after);
      if (cursor === undefined || cursor.organizationId !== organizationId)
        throw invalidParameter('after', `No batch '${options.after}' to continue after.`);
      after = { createdAt: cursor.createdAt, id: cursor.id };
    }
    const rows = await this.repository.list({
      organizationId,
      limit: options.limit + 1,
      ...(options.status === undefined ? {} : { status: options.status }),
      ...(after === undefined ? {} : { after }),
    });
    return { batches: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
  }

  /**
   * validating | in_progress -> canceled at once (SPEC states table). Lines already running finish
   * and, with every line done before, go to the output and error files, which the worker writes
   * shortly after. Any other status is 409 `cannot_cancel`.
   */
  async cancel(auth: AuthContext, batchId: string): Promise<BatchRecord> {
    this.authorize(auth);
    return this.cancelInOrganization(auth.organizationId, batchId);
  }

  /** Cancel on the organization's behalf (the owners' dashboard: a session, not a key). */
  async cancelInOrganization(organizationId: string, batchId: string): Promise<BatchRecord> {
    const batch = await this.find(organizationId, batchId);
    if (!(await this.repository.cancel(batchId, this.clock.now()))) {
      const current = (await this.repository.findById(batchId)) ?? batch;
      throw cannotCancel(batchId, current.status);
    }
    this.onWork();
    return this.find(organizationId, batchId);
  }

  /** The organization's batch for the owners' dashboard; 404 `batch_not_found` for other organizations'. */
  retrieveInOrganization(organizationId: string, batchId: string): Promise<BatchRecord> {
    return this.find(organizationId, batchId);
  }

  /** The organization's newest batches for the owners' dashboard. */
  listInOrganization(organizationId: string, limit: number): Promise<BatchRecord[]> {
    return this.repository.list({ organizationId, limit });
  }
}
