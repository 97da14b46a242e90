/**
 * Every routed deployment with its live state (weight, limits, this minute's requests and tokens, in
 * flight, cooldown, latency average) as `switchyard routes` and the operator's fleet page show it.
 */
import type { DeploymentState, DeploymentStateStore } from '../../../limits/deployment-state.ts';
import type { deploymentTable } from './deployment-table.ts';

export interface DeploymentRow {
  model: string;
  strategy: string;
  deployment: string;
  upstream_model: string;
  weight: number;
  requests_per_minute_limit: number | null;
  tokens_per_minute_limit: number | null;
  /** Null for a model with one deployment and no limits: it is routed without shared state. */
  live: {
    in_flight: number;
    requests_this_minute: number;
    tokens_this_minute: number;
    cooling_until: string | null;
    latency_ms: number | null;
  } | null;
}

/** The rows of every model (or of `only`); live figures are null without a shared state or for direct models. */
export async function deploymentRows(
  table: ReturnType<typeof deploymentTable>,
  state: DeploymentStateStore | undefined,
  nowMs: number,
  only?: string,
): Promise<DeploymentRow[]> {
  const rows: DeploymentRow[] = [];
  for (const routed of table.values()) {
    if (only !== undefined && routed.modelId !== only) continue;
    const live: Array<DeploymentState | undefined> =
      state === undefined || routed.direct
        ? routed.deployments.map(() => undefined)
        : await state.read(routed.deployments.map((deployment) => deployment.ref));
    routed.deployments.forEach((deployment, index) => {
      const current = live[index];
      rows.push({
        model: routed.modelId,
        strategy: routed.direct ? 'direct' : routed.strategy,
        deployment: deployment.id,
        upstream_model: deployment.target.upstreamModel,
        weight: deployment.weight,
        requests_per_minute_limit: deployment.limits.requestsPerMinute || null,
        tokens_per_minute_limit: deployment.limits.tokensPerMinute || null,
        live:
          current === undefined
            ? null
            : {
                in_flight: current.inFlight,
                requests_this_minute: current.requests,
                tokens_this_minute: current.tokens,
                cooling_until: current.coolingUntilMs > nowMs ? new Date(current.coolingUntilMs).toISOString() : null,
                latency_ms: current.latencyMs === null ? null : Math.round(current.latencyMs),
              },
      });
    });
  }
  return rows;
}
