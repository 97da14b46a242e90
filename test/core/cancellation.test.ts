/**
 * Cancellation (core/cancellation.ts): a CancellationSource behaves as the AbortSignal it stands in for
 * (listeners once, in order, removable, none after the abort; the default reason an AbortError), and
 * `abortSignalOf` gives a real AbortSignal that follows it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { abortSignalOf, CancellationSource, type Cancellation } from '../../src/core/cancellation.ts';
import { TYPESCRIPT_LOADER } from '../support/typescript-loader.ts';

describe('CancellationSource', () => {
  test('listeners run once, in order; a removed one does not run', () => {
    const source = new CancellationSource();
    const calls: string[] = [];
    const removed = (): void => void calls.push('removed');
    source.addEventListener('abort', () => calls.push('first'));
    source.addEventListener('abort', removed);
    source.addEventListener('abort', () => calls.push('second'), { once: true });
    source.removeEventListener('abort', removed);
    assert.equal(source.aborted, false);
    source.abort('gone');
    source.abort('again');
    assert.deepEqual(calls, ['first', 'second']);
    assert.equal(source.aborted, true);
    assert.equal(source.reason, 'gone');
  });

  test('the default reason is an AbortError, as with AbortController', () => {
    const source = new CancellationSource();
    source.abort();
    assert.ok(source.reason instanceof DOMException);
    assert.equal((source.reason as DOMException).name, 'AbortError');
  });

  test('a listener added after the abort never runs (check `aborted` first, as with a signal)', () => {
    const source = new CancellationSource();
    source.abort('gone');
    let called = false;
    source.addEventListener('abort', () => (called = true));
    assert.equal(called, false);
  });

  test('a listener that throws does not stop the others, and surfaces as an uncaught error (as with an EventTarget)', () => {
    // In a child process: the uncaught error would otherwise be charged to this test by the runner.
    const script = `
      import { CancellationSource } from ${JSON.stringify(new URL('../../src/core/cancellation.ts', import.meta.url).href)};
      const source = new CancellationSource();
      source.addEventListener('abort', () => { throw new Error('listener failed'); });
      source.addEventListener('abort', () => console.log('second listener ran'));
      process.on('uncaughtException', (error) => console.log('uncaught: ' + error.message));
      source.abort();
      console.log('abort returned');
    `;
    const child = spawnSync(process.execPath, [...TYPESCRIPT_LOADER, '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(child.stdout.trim().split('\n'), ['second listener ran', 'abort returned', 'uncaught: listener failed']);
  });

  test('its AbortSignal follows it, whether asked for before or after the abort', () => {
    const early = new CancellationSource();
    const signal = early.signal;
    assert.equal(early.signal, signal);
    assert.equal(signal.aborted, false);
    early.abort('gone');
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, 'gone');

    const late = new CancellationSource();
    late.abort('left');
    assert.equal(late.signal.aborted, true);
    assert.equal(late.signal.reason, 'left');
  });
});

describe('abortSignalOf', () => {
  test('an AbortSignal is its own; a source gives its signal', () => {
    const controller = new AbortController();
    assert.equal(abortSignalOf(controller.signal), controller.signal);
    const source = new CancellationSource();
    assert.equal(abortSignalOf(source), source.signal);
  });

  test('any other Cancellation is linked to a new AbortSignal', () => {
    const listeners: Array<() => void> = [];
    const other = {
      aborted: false as boolean,
      reason: undefined as unknown,
      addEventListener: (_type: 'abort', listener: () => void) => void listeners.push(listener),
      removeEventListener: () => undefined,
    } satisfies Cancellation;
    const signal = abortSignalOf(other);
    assert.equal(signal.aborted, false);
    other.aborted = true;
    other.reason = 'stop';
    for (const listener of listeners) listener();
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, 'stop');
  });
});
