/**
 * A settle that fails (the limit store's connection lost after the answer was produced) never loses
 * the ledger row of that answer and never throws into the request: the row is recorded first, the
 * failure is logged, and the reservation expires on its own. Against the real Redis of TEST_REDIS_URL,
 * whose connection the test closes between admission and settlement.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import type { AuthContext } from '../../../src/accounts/authenticator.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { emptyUsage } from '../../../src/core/usage.ts';
import { RedisLimitStore } from '../../../src/limits/redis/redis-limit-store.ts';
import { MeteringService } from '../../../src/services/metering/metering-service.ts';
import { UsageLedger, type LedgerRecord } from '../../../src/services/metering/usage-ledger.ts';

const redisUrl = process.env['TEST_REDIS_URL'];
if (redisUrl === undefined || redisUrl === '')
  console.warn('\n*** SKIPPED: settle-failure suite (set TEST_REDIS_URL=redis://127.0.0.1:6379 to run it) ***\n');

describe('a settle that fails after the answer', { skip: redisUrl === undefined || redisUrl === '' }, () => {
  test('the ledger row is recorded, the settle is logged, nothing is thrown', async () => {
    const connection = new Redis(redisUrl!, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    connection.on('error', () => undefined);
    await new Promise((resolve) => connection.once('ready', resolve));
    const store = new RedisLimitStore({ redis: connection, keyPrefix: `switchyard:test:settle:${Date.now()}:` });
    const written: LedgerRecord[] = [];
    const ledger = new UsageLedger({ sink: { insertMany: async (records) => void written.push(...records) }, flushIntervalMs: 3_600_000 });
    const warnings: string[] = [];
    const metering = new MeteringService(loadConfig({ env: {} }), store, ledger, { warn: (_details, message) => warnings.push(message) });
    const auth: AuthContext = {
      keyId: 'key_settle',
      organizationId: 'org-settle',
      tier: 'Developer',
      permissions: new Set(),
      expiresAt: null,
    };
    try {
      const admission = await metering.admit(auth, 50);
      connection.disconnect();
      const arrivedMs = Date.now() - 1_500;
      await admission.settle(
        { ...emptyUsage(), inputTokens: 10, outputTokens: 20 },
        {
          requestId: 'req_settle_failure',
          model: 'switchyard-echo',
          endpoint: '/v1/chat/completions',
          pricing: { inputPerMillion: 0, outputPerMillion: 0 },
          batch: false,
          startedAt: process.hrtime.bigint() - 1_500_000_000n,
        },
      );
      await ledger.flush();
      assert.equal(written.length, 1);
      assert.equal(written[0]!.requestId, 'req_settle_failure');
      assert.equal(written[0]!.outputTokens, 20);
      assert.ok(Math.abs(written[0]!.createdAtMs - arrivedMs) < 200, 'created_at is the arrival time, not the settle time');
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /settle failed/);
      assert.equal(admission.totalUsage.limit !== undefined, true, 'the admission figures remain readable for _metadata');
    } finally {
      await ledger.close();
      connection.disconnect();
    }
  });
});
