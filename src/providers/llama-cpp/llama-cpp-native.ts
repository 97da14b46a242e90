/**
 * The one node-llama-cpp `Llama` of the process, shared by every llama-cpp provider instance and kept
 * for the life of the process. llama.cpp is a process-wide native library: its log callback can be
 * installed only once per process (a second `Llama` prints straight to stderr), one backend serves any
 * number of models, and node-llama-cpp disposes it at exit. Provider instances release their models and
 * contexts when they close; the backend itself holds no model memory and no event-loop handle.
 *
 * - CPU only, prebuilt binary only: `gpu: false`, `build: 'never'` (no compile, no download).
 * - `maxThreads` is the largest thread count any provider asked for; each context uses its own count.
 * - llama.cpp's log lines go to the logger of the oldest open provider that has one.
 */
import type * as NodeLlamaCpp from 'node-llama-cpp';
import type { Llama, LlamaLogLevel } from 'node-llama-cpp';
import type { ProviderLogger } from '../shared/provider-context.ts';

/** One provider instance's claim on the shared backend. */
export interface LlamaUser {
  /** CPU threads the provider's contexts use. */
  threads: number;
  logger: ProviderLogger | undefined;
}

const users = new Set<LlamaUser>();
let shared: Promise<Llama> | undefined;

function log(level: LlamaLogLevel, message: string): void {
  const text = message.trim();
  let logger: ProviderLogger | undefined;
  for (const user of users) {
    logger = user.logger;
    if (logger !== undefined) break;
  }
  if (text === '' || logger === undefined) return;
  if (level === 'fatal' || level === 'error' || level === 'warn') {
    logger.warn({ level }, `llama.cpp: ${text}`);
  } else {
    logger.debug({ level }, `llama.cpp: ${text}`);
  }
}

function maxThreads(): number {
  return Math.max(1, ...[...users].map((user) => user.threads));
}

/** Registers a provider as a user (for log routing and the thread budget). */
export function registerLlamaUser(user: LlamaUser): void {
  users.add(user);
}

/** Unregisters a closed provider; the backend stays loaded for the next one. */
export function unregisterLlamaUser(user: LlamaUser): void {
  users.delete(user);
}

/** The shared backend, created on first use. A failed creation is retried by the next call. */
export async function sharedLlama(): Promise<Llama> {
  if (shared === undefined) {
    const creating = loadNodeLlamaCpp().then(({ getLlama, LlamaLogLevel }) =>
      getLlama({
        gpu: false,
        build: 'never',
        progressLogs: false,
        // node-llama-cpp's CPU default oversubscribes small machines: 4 threads on 2 cores ran 200x slower than 2.
        maxThreads: maxThreads(),
        logLevel: LlamaLogLevel.warn,
        logger: log,
      }),
    );
    shared = creating;
    creating.catch(() => {
      if (shared === creating) shared = undefined;
    });
  }
  const llama = await shared;
  if (llama.maxThreads < maxThreads()) llama.maxThreads = maxThreads();
  return llama;
}

let module: Promise<typeof NodeLlamaCpp> | undefined;

/**
 * node-llama-cpp itself, imported on first use: it costs tens of MB of memory, which a service with no
 * llama-cpp model should not pay.
 */
export function loadNodeLlamaCpp(): Promise<typeof NodeLlamaCpp> {
  module ??= import('node-llama-cpp');
  return module;
}
