/**
 * `metered()`: the one admit -> work -> settle shape of the non-generation endpoints, against the
 * in-process limit store: the work's usage is settled and recorded; a failing work is settled with
 * nothing used and its status (500 for an unexpected error), and its error is rethrown; a refusal
 * (429) happens before the work runs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AuthContext } from '../../../src/accounts/authenticator.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { CancellationSource } from '../../../src/core/cancellation.ts';
import { invalidParameter } from '../../../src/core/service-error.ts';
import { emptyUsage } from '../../../src/core/usage.ts';
import { MemoryLimitStore } from '../../../src/limits/memory/memory-limit-store.ts';
import type { Caller } from '../../../src/services/caller.ts';
import { metered } from '../../../src/services/metering/metered.ts';
import type { LedgerContext } from '../../../src/services/metering/metering-service.ts';
import { MeteringService } from '../../../src/services/metering/metering-service.ts';
import { UsageLedger, type LedgerRecord } from '../../../src/services/metering/usage-ledger.ts';

function setup() {
  const written: LedgerRecord[] = [];
  const ledger = new UsageLedger({ sink: { insertMany: async (records) => void written.push(...records) }, flushIntervalMs: 3_600_000 });
  const metering = new MeteringService(loadConfig({ env: {} }), new MemoryLimitStore(), ledger);
  const auth: AuthContext = {
    keyId: 'key_metered',
    organizationId: 'org-metered',
    tier: 'Developer',
    permissions: new Set(),
    expiresAt: null,
  };
  const caller: Caller = {
    auth,
    requestId: 'req_metered',
    batch: false,
    startedAt: process.hrtime.bigint(),
    signal: new CancellationSource(),
  };
  const context: LedgerContext = {
    requestId: caller.requestId,
    model: 'm',
    endpoint: '/v1/embeddings',
    pricing: { inputPerMillion: 0, outputPerMillion: 0 },
    batch: false,
    startedAt: caller.startedAt,
  };
  return { written, ledger, metering, caller, context };
}

describe('metered()', () => {
  test('settles with the usage of the work, records the request and returns the settled admission', async () => {
    const { written, ledger, metering, caller, context } = setup();
    const { value, admission } = await metered(metering, caller, 20, context, async () => ({
      value: 'done',
      usage: { ...emptyUsage(), inputTokens: 12 },
    }));
    assert.equal(value, 'done');
    assert.equal(admission.isSettled, true);
    assert.ok(admission.headers['x-ratelimit-limit-requests'] !== undefined);
    await ledger.flush();
    assert.equal(written.length, 1);
    assert.equal(written[0]!.statusCode, 200);
    assert.equal(written[0]!.inputTokens, 12);
    await ledger.close();
  });

  test('a failing work is settled with nothing used and its status, and its error rethrown', async () => {
    const { written, ledger, metering, caller, context } = setup();
    const refusal = invalidParameter('input', 'no');
    await assert.rejects(
      metered(metering, caller, 20, context, async () => {
        throw refusal;
      }),
      (error) => error === refusal,
    );
    await assert.rejects(
      metered(metering, caller, 20, context, async () => {
        throw new Error('unexpected');
      }),
      /unexpected/,
    );
    await ledger.flush();
    assert.deepEqual(
      written.map((record) => [record.statusCode, record.inputTokens]),
      [
        [400, 0],
        [500, 0],
      ],
    );
    await ledger.close();
  });
});
