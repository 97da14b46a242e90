/**
 * How a caller says "stop" to a use case. `Cancellation` is the part of an AbortSignal the services
 * and providers read (`aborted`, `reason`, an `abort` listener), so an AbortSignal is one. The edge
 * gives each request a `CancellationSource` instead, and so does each upstream attempt (the upstream
 * call follows it: providers/shared/upstream-body.ts). An AbortController costs an EventTarget, a
 * listener map and a listener record per subscriber (bench/node-primitives.ts prices them at ~2.8 µs to
 * make and ~1.8 µs to add and remove a listener); inside the loaded server each of the two a request
 * made cost ~9% of its CPU (paired runs of bench/server-flags.ts). A source keeps its listeners in an
 * array and makes a real AbortSignal only when something asks for one (`abortSignalOf`: an image
 * download, batched embeddings).
 */

/** The part of an AbortSignal that says whether, why and when the caller stopped. */
export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A Cancellation that its owner aborts (the edge, when the client leaves early). */
export class CancellationSource implements Cancellation {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;
  private controller: AbortController | undefined;

  /** Listeners run once, in the order they were added, when the source aborts (at once if it has). */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (listeners === undefined) return;
    const index = listeners.lastIndexOf(listener);
    if (index !== -1) listeners.splice(index, 1);
  }

  /** Aborts once; later calls do nothing. The default reason is an AbortError, as AbortController's. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        // As an EventTarget does: a failing listener neither stops the others nor the caller.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  /** A real AbortSignal that follows this source, made on first use. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}

/** An AbortSignal for APIs that need one: the signal itself, a source's own, or one linked to `cancellation`. */
export function abortSignalOf(cancellation: Cancellation): AbortSignal {
  if (cancellation instanceof AbortSignal) return cancellation;
  if (cancellation instanceof CancellationSource) return cancellation.signal;
  const controller = new AbortController();
  if (cancellation.aborted) controller.abort(cancellation.reason);
  else cancellation.addEventListener('abort', () => controller.abort(cancellation.reason), { once: true });
  return controller.signal;
}
