/**
 * Config agreement across instances: each instance publishes the hash of its effective config
 * (config/config-hash.ts) in the database with a heartbeat, and compares it with the hashes of the
 * instances heard from lately. A disagreement is reported in /readyz's body and logged once per change
 * (not per check); it does not make the instance unready, since every instance would then leave the
 * balancer's pool together.
 */

/** The storage this needs (db/repositories/instances-repository.ts). */
export interface InstancesStore {
  beat(id: string, configHash: string, nowMs: number): Promise<void>;
  live(sinceMs: number): Promise<Array<{ id: string; configHash: string }>>;
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
  /** Milliseconds between heartbeats (default 10,000); an instance silent for three is gone. */
  heartbeatMs?: number;
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

  constructor(private readonly options: ConfigAgreementOptions) {
    this.heartbeatMs = options.heartbeatMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** First heartbeat now (a failure is logged, not thrown: the database check reports it), then on a timer. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.heartbeatMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    try {
      await this.options.store.beat(this.options.instanceId, this.options.configHash, this.now());
      this.latest = await this.report();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'config agreement: heartbeat failed');
    }
  }

  /** Compares with the live instances; logs when the set of disagreeing ones changed. */
  async report(): Promise<ConfigAgreementReport> {
    const live = await this.options.store.live(this.now() - 3 * this.heartbeatMs);
    const disagreeing = live
      .filter((row) => row.configHash !== this.options.configHash)
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

  /** Stops the heartbeat and removes this instance's row. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.options.store.remove(this.options.instanceId).catch(() => undefined);
  }
}
