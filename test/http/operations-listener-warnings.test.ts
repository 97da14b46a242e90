// The operations listener (OPERATIONS_PORT) starts without Fastify's FSTDEP023 deprecation warning
// (issue 40 item 10): it used the top-level `disableRequestLogging` option, printed at every start.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { buildOperationsListener } from '../../src/http/operations-listener.ts';

test('building and serving the operations listener emits no deprecation warning', async () => {
  const warnings: Array<{ name: string; code?: string; message: string }> = [];
  const onWarning = (warning: Error & { code?: string }) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    const app = await buildOperationsListener({
      operator: 'test',
      logger: pino({ level: 'silent' }),
      routes: (instance) => instance.get('/healthz', async () => ({ status: 'ok' })),
    });
    const answer = await app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(answer.statusCode, 200);
    await app.close();
    // process.emitWarning delivers on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(
    warnings.filter((warning) => warning.name === 'FastifyDeprecation').map((warning) => warning.code),
    [],
  );
});
