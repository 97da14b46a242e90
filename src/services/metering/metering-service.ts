/**
 * Ties the limit store and the usage ledger to requests: `admit` reserves before the work
 * (one round trip on Redis) or throws the SPEC 429; the returned Admission settles exactly once with
 * the real usage, whether the answer completed, stopped early, failed or was abandoned by the client,
 * and records the request in the ledger.
 */
import type { AuthContext } from '../caller-identity.ts';
import { effectiveTiers, type Config } from '../../config/index.ts';
import { countTextTokens } from '../../core/count-tokens.ts';
import { isServiceError } from '../../core/service-error.ts';
import type { BatchStage } from '../../core/batched.ts';
import type { StreamPart } from '../../core/stream-parts.ts';
import { answeredUsage, emptyUsage, totalTokens, type Usage } from '../../core/usage.ts';
import {
  limitPolicyFromTier,
  type AdmitCheck,
  type LimitPolicy,
  type LimitSnapshot,
  type LimitStore,
  type Reservation,
} from '../../limits/limit-store.ts';
import type { AccountUsageReader, AccountUsageSnapshot, UsageInfo, UsageSubject } from '../account-usage.ts';
import { worstCaseCostMicroUsd, type PriceCard } from './price-card.ts';
import type { BudgetService, ResolvedBudget } from '../budgets/budget-service.ts';
import { DEFAULT_THRESHOLDS_PERCENT } from '../budgets/budget-service.ts';
import { budgetInfo, budgetRefusalMessage, type BudgetInfo } from '../budgets/budget-view.ts';
import type { SpendObserver } from '../budgets/spend-observer.ts';
import { rateLimitError, rateLimitHeaders } from './rate-limit-headers.ts';
import { createLedgerRecord, type CacheHitCharge, type LedgerRecord, type UsageLedger } from './usage-ledger.ts';
import { keyUsageInfo, userTotalUsage } from './usage-info.ts';
import { SPAN_NAMES, traceStep, type RequestTrace } from '../../telemetry/trace-types.ts';
import { tracedLedgerSink } from '../trace-hooks.ts';

/** What the ledger needs to know about a metered request besides its usage. */
export interface LedgerContext {
  requestId: string;
  /** Public model id. */
  model: string;
  /** Request path, e.g. `/v1/chat/completions`. */
  endpoint: string;
  /** The model's price card (config `models[].pricing`, resolved at load). */
  pricing: PriceCard;
  /** Batch lines are priced at the card's batch factor. */
  batch: boolean;
  /** process.hrtime.bigint() at request arrival, for the latency column. */
  startedAt: bigint;
  /** The deployment that answered; set once the generation has started. */
  deployment?: string;
  /** The request's trace (tracing on): the settle and ledger spans. */
  trace?: RequestTrace | undefined;
  /** Answered by the response cache: what the hit costs and saves (services/cache/cache-accounting.ts). */
  cacheHit?: CacheHitCharge | undefined;
}

function snapshotOf(figures: LimitSnapshot): AccountUsageSnapshot {
  return { ...keyUsageInfo(figures), total: userTotalUsage(figures) };
}

export class Admission {
  /** Rate-limit headers for the answer. */
  readonly headers: Record<string, string>;
  /** Limit figures: right after admission, then after settlement. */
  private figures: LimitSnapshot;
  private snapshot: AccountUsageSnapshot | undefined;
  private settled = false;

  constructor(
    private readonly store: LimitStore,
    private readonly ledger: UsageLedger,
    private readonly reservation: Reservation,
    figures: LimitSnapshot,
    headers: Record<string, string>,
    private readonly auth: AuthContext,
    /** Takes the ledger record instead of `ledger` (a batch line's record is written with its outcome). */
    private readonly ledgerSink?: (record: LedgerRecord) => void,
    /** Told when the limit store could not settle (the request is not failed for it). */
    private readonly onSettleFailure?: (error: unknown) => void,
    /** The budgets reserved against (services/budgets/), in the reservation's order. */
    private readonly budgets: readonly ResolvedBudget[] = [],
    /** Told what each settlement did to the budgets (the alerts). */
    private readonly spendObserver?: SpendObserver,
  ) {
    this.headers = headers;
    this.figures = figures;
  }

  /** Daily, monthly and total usage, built when first read (dates formatted only when needed). */
  get usage(): AccountUsageSnapshot {
    this.snapshot ??= snapshotOf(this.figures);
    return this.snapshot;
  }

  /** Just `_metadata.user_total_usage`: one date formatted instead of three on every answer. */
  get totalUsage(): UsageInfo {
    return this.snapshot?.total ?? userTotalUsage(this.figures);
  }

  get isSettled(): boolean {
    return this.settled;
  }

  /** Spend, remaining and reset of each budget this request was reserved against (`_metadata.budgets`). */
  get budgetFigures(): BudgetInfo[] {
    return this.budgets.map((budget, index) => budgetInfo(budget, this.figures.budgets?.[index]));
  }

  /**
   * Replaces the reservation by `usage` (none: nothing was used) and, with a ledger context, records
   * the request. Exactly once: later calls do nothing.
   */
  async settle(usage: Usage | undefined, ledgerContext?: LedgerContext, statusCode = 200): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    let costMicroUsd = 0;
    // The ledger row first: an answer that was produced is billed whatever happens to the counters.
    if (ledgerContext !== undefined) {
      const latencyMs = Number(process.hrtime.bigint() - ledgerContext.startedAt) / 1e6;
      const entry = createLedgerRecord({
        requestId: ledgerContext.requestId,
        organizationId: this.auth.organizationId,
        keyId: this.auth.keyId,
        model: ledgerContext.model,
        endpoint: ledgerContext.endpoint,
        usage: usage ?? emptyUsage(),
        pricing: ledgerContext.pricing,
        batch: ledgerContext.batch,
        statusCode,
        latencyMs,
        // The arrival time: the day and month a request is billed in is the one it came in.
        createdAtMs: Math.round(Date.now() - latencyMs),
        deployment: ledgerContext.deployment ?? null,
        cacheHit: ledgerContext.cacheHit,
      });
      costMicroUsd = entry.costMicroUsd;
      // Untraced (the common case): straight to the sink, no closure per settlement.
      const sink = this.ledgerSink;
      if (ledgerContext.trace?.recording === true)
        tracedLedgerSink(ledgerContext.trace, sink ?? ((record: LedgerRecord) => this.ledger.record(record)))(entry);
      else if (sink !== undefined) sink(entry);
      else this.ledger.record(entry);
    }
    const actual = usage === undefined ? 0 : totalTokens(usage);
    if (this.reservation.estimatedTokens > 0 || actual > 0 || this.budgets.length > 0) {
      try {
        const settled = await traceStep(
          ledgerContext?.trace,
          SPAN_NAMES.settle,
          this.store.settle(this.reservation, actual, this.budgets.length > 0 ? costMicroUsd : undefined),
        );
        this.figures = settled.figures;
        this.snapshot = undefined;
        if (settled.settled && this.budgets.length > 0) this.observeSpend(ledgerContext?.requestId);
      } catch (error) {
        // Bookkeeping never turns a finished answer into an error: the reservation stays charged at its
        // estimate until its window ends (limits/README.md), and the answer keeps the admission figures.
        this.onSettleFailure?.(error);
      }
    }
  }

  /** Tells the spend observer (the alerts) where each budget stands after this settlement. */
  private observeSpend(requestId: string | undefined): void {
    if (this.spendObserver === undefined) return;
    const figures = this.figures.budgets;
    this.spendObserver.observe({
      requestId: requestId ?? this.reservation.id,
      organizationId: this.auth.organizationId,
      keyId: this.auth.keyId,
      atMs: this.figures.atMs,
      budgets: this.budgets.map((budget, index) => ({
        budgetId: budget.budgetId,
        scope: budget.scope,
        organizationId: budget.organizationId,
        keyId: budget.keyId,
        period: budget.period,
        periodStartMs: budget.window.startMs,
        periodEndMs: budget.window.endMs,
        amountMicroUsd: budget.amountMicroUsd,
        spentMicroUsd: figures?.[index]?.spentMicroUsd ?? 0,
        thresholdsPercent: DEFAULT_THRESHOLDS_PERCENT,
      })),
    });
  }

  /**
   * The meter of a generation: a stage (core/batched.ts) for the caller to run over the generation's
   * stream (the generation service runs it in its own loop). It settles this admission once the stream
   * is over, with the reported usage or, when the stream did not finish, with what was produced.
   */
  meter(ledgerContext: LedgerContext, promptTokens: number): BatchStage<StreamPart> {
    return new UsageMeter(this, ledgerContext, promptTokens);
  }

  /**
   * The generation could not start (upstream refused, model unavailable): settles with nothing used
   * and records the failure with its status (500 for anything that is not a ServiceError).
   */
  settleFailedStart(error: unknown, ledgerContext: LedgerContext): Promise<void> {
    return this.settle(undefined, ledgerContext, isServiceError(error) ? error.status : 500);
  }
}

/**
 * Passes a generation stream through and settles its admission when the stream is over: with the
 * reported usage after `finish`; otherwise (error part, exception, client gone) with what was produced
 * so far, counted locally: the estimated prompt plus the tokens of the text already streamed.
 */
class UsageMeter implements BatchStage<StreamPart> {
  readonly ended = false;
  private usage: Usage | undefined;
  private statusCode = 200;
  private readonly produced: string[] = [];

  constructor(
    private readonly admission: Admission,
    private readonly ledgerContext: LedgerContext,
    private readonly promptTokens: number,
  ) {}

  push(batch: readonly StreamPart[]): readonly StreamPart[] {
    for (const part of batch) {
      switch (part.type) {
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-input-delta':
          this.produced.push(part.delta);
          break;
        case 'finish':
          this.usage = part.usage;
          break;
        case 'error':
          this.statusCode = part.error.status;
          break;
      }
    }
    return batch;
  }

  close(): Promise<void> {
    let usage = this.usage;
    let statusCode = this.statusCode;
    if (usage === undefined) {
      // The backend was called and may bill what it produced: one request with the counted figures.
      usage = answeredUsage({ inputTokens: this.promptTokens, outputTokens: countTextTokens(this.produced.join('')), estimated: true });
      if (statusCode === 200) statusCode = 499; // the client went away before the end
    }
    return this.admission.settle(usage, this.ledgerContext, statusCode);
  }
}

/** What bounds a request's cost: its price card and the most it can use (price-card `worstCaseCostMicroUsd`). */
export interface CostBound {
  pricing: PriceCard;
  promptTokens: number;
  maxOutputTokens: number;
  images?: { count: number; size?: string; quality?: string };
}

export interface AdmitOptions {
  /** A batch line: outside the key's per-minute limits. */
  batch?: boolean;
  /** The request's price card and bounds: reserved against every budget that applies (none: no budget is touched). */
  cost?: CostBound | undefined;
  /** Where the ledger record goes instead of the batched usage ledger (see `Caller.ledgerSink`). */
  ledgerSink?: ((record: LedgerRecord) => void) | undefined;
}

/** Appended to the key id of batch lines' per-minute counters (see `admit`). */
const BATCH_SUBJECT_SUFFIX = ':batch';

export class MeteringService implements AccountUsageReader {
  private readonly policies = new Map<string, LimitPolicy>();

  constructor(
    config: Config,
    private readonly store: LimitStore,
    private readonly ledger: UsageLedger,
    /** Told about settles that failed for a reason other than the store being away (those its breaker reports). */
    private readonly logger?: { warn(details: object, message: string): void },
    /** Money budgets (services/budgets/) and who is told of spend (the alerts); without them no budget applies. */
    private readonly spend: { budgets?: BudgetService; observer?: SpendObserver } = {},
  ) {
    // Retired tiers count with their replacement's limits (config/tiers.ts).
    for (const [name, tier] of Object.entries(effectiveTiers(config))) this.policies.set(name, limitPolicyFromTier(tier));
    this.fallbackPolicy = this.policies.get(config.defaultTier)!;
  }

  /** For a key whose tier this config does not know (another instance's config): the default tier's limits, never none. */
  private readonly fallbackPolicy: LimitPolicy;

  /** Counts failed settles; logs the first of each burst (a failing store would otherwise log per request). */
  private settleFailures = 0;
  private lastSettleFailureLogMs = 0;
  private readonly settleFailed = (error: unknown): void => {
    this.settleFailures++;
    const now = Date.now();
    if (now - this.lastSettleFailureLogMs < 60_000) return;
    this.lastSettleFailureLogMs = now;
    this.logger?.warn(
      { err: error, failedSettles: this.settleFailures },
      'rate-limit store: a settle failed; the answer was delivered and billed, the reservation expires on its own',
    );
  };

  private policyFor(auth: UsageSubject): LimitPolicy {
    // The key's tier capped by its organization's plan (accounts/plans.ts), read with the key.
    if (auth.limits !== undefined) return auth.limits;
    // A key whose tier this config does not know (another instance's config): the default tier's limits, never none.
    return this.policies.get(auth.tier) ?? this.fallbackPolicy;
  }

  /**
   * Admits one request reserving `estimatedTokens`, or throws the SPEC 429 with its headers. Batch lines
   * count toward the daily and monthly token quotas but not the key's per-minute limits: a running
   * batch must never make its owner's interactive calls 429 (the batch worker paces itself).
   */
  async admit(auth: AuthContext, estimatedTokens: number, options: AdmitOptions = {}): Promise<Admission> {
    const policy = this.policyFor(auth);
    // Per-minute figures belong to the key, day and month ones to the organization: batch lines are
    // counted under a key subject of their own with no per-minute limit, so they share the quotas only.
    const batch = options.batch === true;
    const cost = options.cost;
    const budgets =
      cost === undefined || this.spend.budgets === undefined
        ? []
        : await this.spend.budgets.applicable({
            organizationId: auth.organizationId,
            keyId: auth.keyId,
            plan: auth.limits?.plan ?? auth.tier,
          });
    const estimatedCostMicroUsd = budgets.length === 0 || cost === undefined ? 0 : worstCaseCostMicroUsd(cost, cost.pricing, { batch });
    // Built field by field: a conditional spread in this literal took V8's slow path on every admission.
    const check: AdmitCheck = {
      subject: { organizationId: auth.organizationId, keyId: batch ? `${auth.keyId}${BATCH_SUBJECT_SUFFIX}` : auth.keyId },
      policy: batch
        ? { ...policy, requestsPerMinute: 0, tokensPerMinute: 0, organizationRequestsPerMinute: 0, organizationTokensPerMinute: 0 }
        : policy,
      estimatedTokens,
    };
    if (budgets.length > 0) {
      check.budgets = budgets.map((budget) => budget.charge);
      check.estimatedCostMicroUsd = estimatedCostMicroUsd;
    }
    const result = await this.store.admit(check);
    if (!result.admitted) {
      const budget = result.rejection.budgetIndex === undefined ? undefined : budgets[result.rejection.budgetIndex];
      if (budget === undefined) throw rateLimitError(result);
      result.rejection.scope = budget.scope;
      throw rateLimitError(result, {
        message: budgetRefusalMessage(budget, result.rejection.remaining, estimatedCostMicroUsd),
        period: budget.period,
        resets: budget.window.endMs !== null,
      });
    }
    return new Admission(
      this.store,
      this.ledger,
      result.reservation,
      result.figures,
      rateLimitHeaders(result),
      auth,
      options.ledgerSink,
      this.settleFailed,
      budgets,
      this.spend.observer,
    );
  }

  /** Spend, remaining and reset of every budget that applies to the caller (`/v1/auth/key`). Changes nothing. */
  async budgetsOf(auth: UsageSubject): Promise<BudgetInfo[]> {
    if (this.spend.budgets === undefined) return [];
    const budgets = await this.spend.budgets.applicable({
      organizationId: auth.organizationId,
      keyId: auth.keyId,
      plan: auth.limits?.plan ?? auth.tier,
    });
    if (budgets.length === 0) return [];
    const snapshot = await this.store.usage(
      { organizationId: auth.organizationId, keyId: auth.keyId },
      this.policyFor(auth),
      budgets.map((budget) => budget.charge),
    );
    return budgets.map((budget, index) => budgetInfo(budget, snapshot.budgets?.[index]));
  }

  async read(auth: UsageSubject, options: { budgets?: boolean } = {}): Promise<AccountUsageSnapshot> {
    const snapshot = snapshotOf(await this.store.usage({ organizationId: auth.organizationId, keyId: auth.keyId }, this.policyFor(auth)));
    return options.budgets === true ? { ...snapshot, budgets: await this.budgetsOf(auth) } : snapshot;
  }
}
