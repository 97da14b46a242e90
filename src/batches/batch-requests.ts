/**
 * The `/v1/batches` use cases as the routes call them: admit the request (services/metering/admitted-request.ts),
 * decode the list query with the batches wire format, do the work on the batch service (which answers a
 * Free-tier caller with the SPEC's `batch_api_not_allowed` before checking the `batches` permission) and
 * answer in that format. The format is a value the route hands in (formats/openai-batches).
 */
import type { JsonAnswer } from '../services/answer.ts';
import type { Caller } from '../services/caller.ts';
import { answerAdmittedRequest, type RequestMetering } from '../services/metering/admitted-request.ts';
import type { BatchRecord, BatchStatus } from './batch-records.ts';
import type { BatchService } from './batch-service.ts';

/** The batches wire format, as these use cases read and write it. */
export interface BatchesWire {
  /** The list query; `status` as the client sent it (an unknown one matches no batch). */
  decodeListQuery(query: unknown): { after?: string; limit: number; status?: string };
  encodeBatch(batch: BatchRecord): Record<string, unknown>;
  encodeList(batches: readonly BatchRecord[], hasMore: boolean): Record<string, unknown>;
}

export class BatchRequests {
  constructor(
    private readonly batches: BatchService,
    private readonly metering: RequestMetering,
    private readonly wire: BatchesWire,
  ) {}

  create(caller: Caller, body: unknown): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () => this.wire.encodeBatch(await this.batches.create(caller.auth, body)));
  }

  list(caller: Caller, query: unknown): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () => {
      const { status, ...options } = this.wire.decodeListQuery(query);
      const page = await this.batches.list(caller.auth, { ...options, ...(status === undefined ? {} : { status: status as BatchStatus }) });
      return this.wire.encodeList(page.batches, page.hasMore);
    });
  }

  retrieve(caller: Caller, batchId: string): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () =>
      this.wire.encodeBatch(await this.batches.retrieve(caller.auth, batchId)),
    );
  }

  cancel(caller: Caller, batchId: string): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () => this.wire.encodeBatch(await this.batches.cancel(caller.auth, batchId)));
  }
}
