/**
 * Polls `check` until it returns a value (a thrown error counts as "not yet"), or fails after
 * `timeoutMs` naming `what`. Tests wait on observable progress with it, never on a fixed sleep; the
 * bound only keeps a broken run from hanging.
 */
export async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 45_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
