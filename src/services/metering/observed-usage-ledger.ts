/**
 * The usage ledger with an observer told of every record as it is buffered: the composition root feeds
 * the per-model token and cost metrics and the access log from it (http/usage-metrics.ts,
 * http/access-log.ts). The observer runs on the request's path: it must be cheap and must not throw.
 */
import { UsageLedger, type LedgerRecord, type UsageLedgerOptions } from './usage-ledger.ts';

export class ObservedUsageLedger extends UsageLedger {
  constructor(
    options: UsageLedgerOptions,
    private readonly observe: (record: LedgerRecord) => void,
  ) {
    super(options);
  }

  override record(record: LedgerRecord): void {
    this.observe(record);
    super.record(record);
  }
}
