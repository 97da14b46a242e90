/**
 * The client span of one upstream attempt (tracing on): which deployment was leased, the model sent
 * upstream, and where the attempt stands among the request's attempts and its model's retries.
 */
import type { ModelConfig } from '../../config/index.ts';
import type { AttemptTrace, RequestTrace } from '../../telemetry/trace-types.ts';
import type { Lease } from './routing/router.ts';

export function startAttemptTrace(
  trace: RequestTrace,
  model: ModelConfig,
  lease: Lease,
  attemptNumber: number,
  retry: number,
): AttemptTrace {
  const { deployment } = lease;
  return trace.startAttempt(
    {
      providerKind: deployment.provider.kind,
      baseUrl: 'baseUrl' in deployment.provider ? deployment.provider.baseUrl : undefined,
      upstreamModel: deployment.target.upstreamModel,
      model: model.id,
      deployment: deployment.id,
      attempt: attemptNumber,
      retry,
    },
    'chat',
  );
}
