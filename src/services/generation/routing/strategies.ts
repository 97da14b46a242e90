/**
 * Routing strategies: small values behind one interface. Each picks one candidate among the healthy
 * deployments of a model (not cooling, not yet tried by this request), from their shared state.
 */
import type { RoutingStrategyName } from '../../../config/index.ts';
import type { DeploymentState } from '../../../limits/deployment-state.ts';
import type { Deployment } from './deployment-table.ts';

export interface RoutingCandidate {
  readonly deployment: Deployment;
  readonly state: DeploymentState;
}

export interface RoutingStrategy {
  readonly name: RoutingStrategyName;
  /** Picks one of `candidates` (never empty). `random` returns a number in [0, 1). */
  choose(candidates: readonly RoutingCandidate[], random: () => number): RoutingCandidate;
}

/** Share of latency-routed requests sent to a random deployment, so that a slow one's average can recover. */
export const LATENCY_EXPLORATION = 0.1;

function byWeight(candidates: readonly RoutingCandidate[], random: () => number): RoutingCandidate {
  if (candidates.length === 1) return candidates[0]!;
  let total = 0;
  for (const candidate of candidates) total += candidate.deployment.weight;
  let point = random() * total;
  for (const candidate of candidates) {
    point -= candidate.deployment.weight;
    if (point < 0) return candidate;
  }
  return candidates[candidates.length - 1]!;
}

/** The candidates with the lowest `score`; a tie is broken by weight, at random. */
function lowest(
  candidates: readonly RoutingCandidate[],
  score: (candidate: RoutingCandidate) => number,
  random: () => number,
): RoutingCandidate {
  let best = Infinity;
  let ties: RoutingCandidate[] = [];
  for (const candidate of candidates) {
    const value = score(candidate);
    if (value < best) {
      best = value;
      ties = [candidate];
    } else if (value === best) {
      ties.push(candidate);
    }
  }
  return byWeight(ties, random);
}

/** Random, in proportion to the configured weights. */
export const weighted: RoutingStrategy = { name: 'weighted', choose: byWeight };

/** Fewest requests in flight. */
export const leastBusy: RoutingStrategy = {
  name: 'least-busy',
  choose: (candidates, random) => lowest(candidates, (candidate) => candidate.state.inFlight, random),
};

/**
 * Lowest moving average of time to first token. A deployment never measured is tried first; then a
 * share (LATENCY_EXPLORATION) of requests goes to a random one by weight, so a deployment that was slow
 * once is measured again.
 */
export const latency: RoutingStrategy = {
  name: 'latency',
  choose(candidates, random) {
    const unmeasured = candidates.filter((candidate) => candidate.state.latencyMs === null);
    if (unmeasured.length > 0) return byWeight(unmeasured, random);
    if (random() < LATENCY_EXPLORATION) return byWeight(candidates, random);
    return lowest(candidates, (candidate) => candidate.state.latencyMs ?? 0, random);
  },
};

/** Share of a deployment's own minute budget still free (requests and tokens, the tighter one); 1 when unlimited. */
export function headroom(candidate: RoutingCandidate): number {
  const { limits } = candidate.deployment;
  let free = 1;
  if (limits.requestsPerMinute > 0) free = Math.min(free, 1 - candidate.state.requests / limits.requestsPerMinute);
  if (limits.tokensPerMinute > 0) free = Math.min(free, 1 - candidate.state.tokens / limits.tokensPerMinute);
  return free;
}

/** Most headroom against the deployment's own requests and tokens per minute. */
export const usage: RoutingStrategy = {
  name: 'usage',
  choose: (candidates, random) => lowest(candidates, (candidate) => -headroom(candidate), random),
};

export const STRATEGIES: Readonly<Record<RoutingStrategyName, RoutingStrategy>> = {
  weighted,
  'least-busy': leastBusy,
  latency,
  usage,
};
