/**
 * The faults of issue 29, in the order the suite runs them, each injected, held, then healed; and the
 * recovery probe run after each heal: per instance, the time from the heal until an echo chat, a 1 KB
 * upload and a file list all answer 200 (probed every 100 ms).
 */
import type { ChaosEnvironment } from './environment.ts';
import { warmUp } from './requests.ts';

export type Dependency = 'database' | 'redis' | 'files' | 'instance';

export interface Fault {
  name: string;
  dependency: Dependency;
  /** How long the fault is held before the heal. */
  outageMs: number;
  inject(): Promise<void>;
  heal(): Promise<void>;
}

export interface FaultRun {
  name: string;
  dependency: Dependency;
  /** Epoch ms: the injection began, the fault was in place (inject resolved), healed (heal resolved), the phase ended. */
  began: number;
  injected: number;
  healed: number;
  end: number;
  /** Per instance: ms from the heal until it served again, or undefined when it did not within the probe's bound. */
  recoveryMs: Array<number | undefined>;
  /** Instances found dead after the heal and restarted by the harness (a supervisor would). */
  restarted: number[];
}

/** The instance the SIGKILL fault kills. */
export const VICTIM = 0;

/** The six faults; `seconds` scales each outage (1 = the issue's 15-20 s). */
export function faults(environment: ChaosEnvironment, scale = 1): Fault[] {
  const { postgres, redis, s3, fleet, key } = environment;
  const held = (ms: number): number => Math.round(ms * scale);
  return [
    { name: 'Postgres restart', dependency: 'database', outageMs: held(3000), inject: () => postgres.stop(), heal: () => postgres.start() },
    {
      name: 'Postgres frozen',
      dependency: 'database',
      outageMs: held(20_000),
      inject: async () => postgres.freeze(),
      heal: async () => postgres.thaw(),
    },
    { name: 'Redis killed', dependency: 'redis', outageMs: held(15_000), inject: () => redis.kill(), heal: () => redis.start() },
    {
      name: 'Redis frozen',
      dependency: 'redis',
      outageMs: held(20_000),
      inject: async () => redis.freeze(),
      heal: async () => redis.thaw(),
    },
    { name: 'Object store killed', dependency: 'files', outageMs: held(15_000), inject: () => s3.kill(), heal: () => s3.start() },
    // A supervisor restarts the killed instance after a short delay; its heal is the moment it listens
    // and has loaded its embeddings model.
    {
      name: 'Instance SIGKILL',
      dependency: 'instance',
      outageMs: 2000,
      inject: () => fleet.kill(VICTIM),
      heal: async () => {
        await fleet.restart(VICTIM);
        await warmUp({ origin: fleet.origin(VICTIM), instance: VICTIM, key });
      },
    },
  ];
}

const PROBE_TIMEOUT_MS = 3000;

/**
 * Ms one round of the recovery probe takes on a healthy instance under the run's own load: the
 * recovery bound adds it (a loaded machine stretches the probe, not the service's recovery).
 */
export async function probeRoundMs(origin: string, key: string): Promise<number> {
  const started = Date.now();
  const passed = await probe(origin, key).catch(() => false);
  return passed ? Date.now() - started : PROBE_TIMEOUT_MS;
}

/** One round of the recovery probe on one instance: true when all three requests answered 200. */
async function probe(origin: string, key: string): Promise<boolean> {
  const auth = { authorization: `Bearer ${key}` };
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  const chat = await fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'switchyard-echo', max_tokens: 8, messages: [{ role: 'user', content: 'probe' }] }),
    signal,
  });
  await chat.arrayBuffer();
  if (chat.status !== 200) return false;
  const form = new FormData();
  form.append('purpose', 'user_data');
  form.append('file', new Blob([Buffer.alloc(1024, 1)]), 'probe.bin');
  const uploaded = await fetch(`${origin}/v1/files`, { method: 'POST', headers: auth, body: form, signal });
  await uploaded.arrayBuffer();
  if (uploaded.status !== 200) return false;
  const listed = await fetch(`${origin}/v1/files?limit=1`, { headers: auth, signal });
  await listed.arrayBuffer();
  return listed.status === 200;
}

/** Ms from `healed` until `origin` passes a probe round, or undefined after `boundMs` or once `alive()` is false. */
export async function recoveryOf(
  origin: string,
  key: string,
  healed: number,
  alive: () => boolean,
  boundMs = 15_000,
): Promise<number | undefined> {
  while (Date.now() - healed < boundMs && alive()) {
    if (await probe(origin, key).catch(() => false)) return Date.now() - healed;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

/**
 * Injects `fault`, holds it, heals it, measures each instance's recovery, restarts any instance that
 * died (recording it), then lets `settleMs` pass before the next fault.
 */
export async function runFault(
  environment: ChaosEnvironment,
  fault: Fault,
  settleMs: number,
  log: (line: string) => void,
): Promise<FaultRun> {
  const { fleet, key } = environment;
  const began = Date.now();
  await fault.inject();
  const injected = Date.now();
  log(`${fault.name}: injected, held ${fault.outageMs} ms`);
  await new Promise((resolve) => setTimeout(resolve, fault.outageMs));
  await fault.heal();
  const healed = Date.now();
  const recoveryMs = await Promise.all(
    Array.from({ length: fleet.size }, (_, index) => recoveryOf(fleet.origin(index), key, healed, () => fleet.alive(index))),
  );
  log(`${fault.name}: healed; recovery ${recoveryMs.map((ms) => (ms === undefined ? 'none' : `${ms} ms`)).join(' / ')}`);
  const restarted = Array.from({ length: fleet.size }, (_, index) => index).filter((index) => !fleet.alive(index));
  if (restarted.length > 0) log(`${fault.name}: instance(s) ${restarted.join(', ')} dead; restarting`);
  await Promise.all(
    restarted.map((index) =>
      fleet
        .restart(index)
        .then(() => warmUp({ origin: fleet.origin(index), instance: index, key }))
        .catch((error: unknown) => log(`instance ${index} did not restart: ${String(error).slice(0, 300)}`)),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  return { name: fault.name, dependency: fault.dependency, began, injected, healed, end: Date.now(), recoveryMs, restarted };
}
