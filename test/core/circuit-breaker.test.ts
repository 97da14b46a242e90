import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CircuitBreaker, DependencyUnavailableError, isUnreachableError } from '../../src/core/circuit-breaker.ts';
import { invalidParameter, serverError, ServiceError } from '../../src/core/service-error.ts';

function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
}

class Lines {
  readonly seen: Array<{ level: string; message: string; details: Record<string, unknown> }> = [];
  warn(details: object, message: string): void {
    this.seen.push({ level: 'warn', message, details: details as Record<string, unknown> });
  }
  info(details: object, message: string): void {
    this.seen.push({ level: 'info', message, details: details as Record<string, unknown> });
  }
}

describe('isUnreachableError', () => {
  test('connection failures, timeouts and Postgres shutdown codes count; answers do not', () => {
    assert.equal(isUnreachableError(refused()), true);
    assert.equal(isUnreachableError(new Error('Command timed out')), true);
    assert.equal(
      isUnreachableError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })),
      true,
    );
    assert.equal(isUnreachableError(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isUnreachableError(serverError('service_unavailable', 'The rate-limit store is unavailable.', refused())), true);
    assert.equal(isUnreachableError(Object.assign(new Error('duplicate key value'), { code: '23505' })), false);
    assert.equal(isUnreachableError(new Error('syntax error at or near')), false);
    assert.equal(isUnreachableError(invalidParameter('model', 'timeout is not a model')), false);
    // An upstream's coded timeout is an answer about the upstream, not a dependency of ours being away.
    assert.equal(
      isUnreachableError(new ServiceError({ status: 500, type: 'server_error', code: 'timeout', message: 'timed out', cause: refused() })),
      false,
    );
  });
});

describe('CircuitBreaker', () => {
  test('opens after the threshold, refuses at once with 500 service_unavailable and retry-after, closes on a good probe, logs each change once', async () => {
    const lines = new Lines();
    let healthy = false;
    let probes = 0;
    const breaker = new CircuitBreaker({
      name: 'redis',
      description: 'The rate-limit store',
      failureThreshold: 2,
      probeIntervalMs: 20,
      logger: lines,
      probe: async () => {
        probes++;
        if (!healthy) throw refused();
      },
    });
    try {
      const failing = () => breaker.run(async () => Promise.reject(refused()));
      await assert.rejects(failing(), DependencyUnavailableError);
      assert.equal(breaker.state, 'closed');
      await assert.rejects(failing(), DependencyUnavailableError);
      assert.equal(breaker.state, 'open');
      let called = false;
      // "At once" without a wall-clock bound (a loaded machine breaks one): the hundred refusals settle
      // before the event loop's next turn, so no timer or I/O is waited for.
      let nextTurn = false;
      setImmediate(() => (nextTurn = true));
      for (let index = 0; index < 100; index++) {
        const error = await breaker
          .run(async () => {
            called = true;
          })
          .catch((caught: unknown) => caught);
        assert.ok(error instanceof DependencyUnavailableError);
        assert.equal(error.status, 500);
        assert.equal(error.code, 'service_unavailable');
        assert.equal(error.headers['retry-after'], '1');
      }
      assert.equal(called, false, 'nothing reaches the dependency while the breaker is open');
      assert.equal(nextTurn, false, 'a hundred refusals settle within one turn of the event loop');
      const probing = Date.now() + 2_000;
      while (probes < 2 && Date.now() < probing) await sleep(10);
      assert.ok(probes >= 2, 'the probe runs while open');
      assert.notEqual(breaker.state, 'closed');
      healthy = true;
      const deadline = Date.now() + 1_000;
      while (breaker.state !== 'closed' && Date.now() < deadline) await sleep(5);
      assert.equal(breaker.state, 'closed', 'a good probe closes it');
      assert.equal(await breaker.run(async () => 'ok'), 'ok');
      assert.deepEqual(
        lines.seen.map((line) => line.level),
        ['warn', 'info'],
        'one line when it went down, one when it came back',
      );
      assert.equal(lines.seen[1]!.details['refused'], 100);
      assert.equal(breaker.failuresTotal, 2);
      assert.equal(breaker.refusedTotal, 100);
    } finally {
      breaker.stop();
    }
  });

  test('a call in flight since before the outage that succeeds while the probe runs closes it once: one line back', async () => {
    const lines = new Lines();
    let releaseProbe: (() => void) | undefined;
    let probeStarted: (() => void) | undefined;
    const probing = new Promise<void>((resolve) => (probeStarted = resolve));
    const breaker = new CircuitBreaker({
      name: 'database',
      failureThreshold: 1,
      probeIntervalMs: 1,
      logger: lines,
      probe: () =>
        new Promise<void>((resolve) => {
          releaseProbe = resolve;
          probeStarted!();
        }),
    });
    // The probe's timer is unref'd (it never holds a process open): this keeps the test's loop alive.
    const keepAlive = setInterval(() => undefined, 1_000);
    try {
      let finishSlowCall: ((value: string) => void) | undefined;
      // Started while the breaker was closed; the dependency answers it only after the outage.
      const slowCall = breaker.run(() => new Promise<string>((resolve) => (finishSlowCall = resolve)));
      await assert.rejects(
        breaker.run(async () => Promise.reject(refused())),
        DependencyUnavailableError,
      );
      assert.equal(breaker.state, 'open');
      await probing;
      assert.equal(breaker.state, 'half-open');
      finishSlowCall!('late');
      assert.equal(await slowCall, 'late');
      assert.equal(breaker.state, 'closed', 'the late success closes it');
      releaseProbe!();
      await sleep(5);
      assert.equal(breaker.state, 'closed');
      assert.deepEqual(
        lines.seen.map((line) => `${line.level} ${line.message.split(' ').slice(0, 3).join(' ')}`),
        ['warn database is down:', 'info database is back'],
        'one line down, one line back, not a second back when the probe answers',
      );
    } finally {
      clearInterval(keepAlive);
      breaker.stop();
    }
  });

  test('answers that are not about reachability pass through and never open it', async () => {
    const breaker = new CircuitBreaker({ name: 'database', failureThreshold: 1 });
    const duplicate = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    await assert.rejects(
      breaker.run(async () => Promise.reject(duplicate)),
      (error: unknown) => error === duplicate,
    );
    assert.equal(breaker.state, 'closed');
    breaker.stop();
  });
});
