/**
 * The instance heartbeat and config agreement across instances: each instance renews its one row in
 * the database (id, version, start time and the hash of its effective config, config/config-hash.ts)
 * every HEARTBEAT_INTERVAL_MS, which the operator's fleet page lists, and compares its hash with those
 * of the instances heard from lately. A disagreement is reported in /readyz's body and logged once per
 * change (not per check); it does not make the instance unready, since every instance would then leave
 * the balancer's pool together.
 */
import { HEARTBEAT_INTERVAL_MS, serviceVersion } from './instance-heartbeat.ts';

/** The storage this needs (db/repositories/instances-repository.ts). */
export interface InstancesStore {
  beat(instance: { id: string; version: string; configHash: string; startedAt: number }, nowMs: number): Promise<void>;
  /** `configHash` null: a row an older version wrote (it published none); left out of the comparison. */
  live(sinceMs: number): Promise<Array<{ id: string; configHash: string | null }>>;
  remove(id: string): Promise<void>;
}

export interface ConfigAgreementReport {
  /** This instance's config hash (sha256 hex). */
  hash: string;
  /** Instances heard from within the last three heartbeats, this one included. */
  instances: number;
  /** Those whose config hash differs from this one's; absent when all agree. */
  disagreeing?: Array<{ instance: string; hash: string }>;
}

export interface ConfigAgreementOptions {
  store: InstancesStore;
  instanceId: string;
  configHash: string;
  /** Milliseconds between heartbeats (default HEARTBEAT_INTERVAL_MS, 5,000); an instance silent for three is gone. */
  heartbeatMs?: number;
  /** The version published in the row (default: package.json's). */
  version?: string;
  logger: { warn(details: object, message: string): void; info(details: object, message: string): void };
  now?: () => number;
}

export class ConfigAgreement {
  private timer: NodeJS.Timeout | undefined;
  /** The disagreeing ids last logged, so a change is logged once. */
  private lastLogged = '';
  private readonly heartbeatMs: number;
  private readonly now: () => number;
  private latest: ConfigAgreementReport | undefined;
  private readonly row: { id: string; version: string; configHash: string; startedAt: number };
  /** True while heartbeats fail: the failure is logged when it starts, the recovery when it ends. */
  private failing = false;

  constructor(private readonly options: ConfigAgreementOptions) {
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_INTERVAL_MS;
    this.now = options.now ?? Date.now;
    this.row = {
      id: options.instanceId,
      version: options.version ?? serviceVersion(),
      configHash: options.configHash,
      startedAt: this.now(),
    };
  }

  /** First heartbeat now (a failure is logged, not thrown: the database check reports it), then on a timer. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.heartbeatMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    try {
      await this.options.store.beat(this.row, this.now());
      this.latest = await this.report();
      if (this.failing) this.options.logger.info({}, 'instance heartbeat written again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.options.logger.warn({ err: error }, 'config agreement: heartbeat failed');
      this.failing = true;
    }
  }

  /** Compares with the live instances; logs when the set of disagreeing ones changed. */
  async report(): Promise<ConfigAgreementReport> {
    const live = await this.options.store.live(this.now() - 3 * this.heartbeatMs);
    const disagreeing = live
      .filter((row): row is { id: string; configHash: string } => row.configHash !== null && row.configHash !== this.options.configHash)
      .map((row) => ({ instance: row.id, hash: row.configHash }));
    const summary = disagreeing.map((row) => `${row.instance}=${row.hash}`).join(',');
    if (summary !== this.lastLogged) {
      this.lastLogged = summary;
      if (disagreeing.length > 0) {
        this.options.logger.warn(
          { configHash: this.options.configHash, disagreeing },
          'config differs between instances: requests may get different answers depending on the instance (compare their config files and environment)',
        );
      } else {
        this.options.logger.info({ configHash: this.options.configHash }, 'config agrees across instances again');
      }
    }
    return {
      hash: this.options.configHash,
      instances: Math.max(live.length, 1),
      ...(disagreeing.length === 0 ? {} : { disagreeing }),
    };
  }

  /** The report of the last heartbeat (what /readyz shows: no query per check); undefined before the first. */
  current(): ConfigAgreementReport | undefined {
    return this.latest;
  }

  /** Stops the heartbeat and removes this instance's row (it leaves the fleet page and the comparison at once). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.options.store.remove(this.options.instanceId).catch(() => undefined);
  }
}
