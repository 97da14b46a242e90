/**
 * POST /v1/moderations: decode (formats/openai-moderations; at most 1 MiB of text), resolve the model
 * (named, or the first catalogue model with the `moderation` capability: the built-in classifier on a
 * fresh install), count the input tokens (in event-loop slices) and admit them against the caller's
 * limits as embeddings do (they count toward tpm and the daily and monthly totals), classify (the
 * built-in engine serves organizations in turn), meter the input tokens, encode the SPEC moderation
 * result.
 */
import { startModelCallTrace } from '../services/trace-hooks.ts';
import { spanUntil } from '../telemetry/trace-types.ts';
import type { FastifyInstance } from 'fastify';
import type { Capability, Config, ModelConfig } from '../config/index.ts';
import { countTextTokensAsync } from '../core/count-tokens.ts';
import { EventLoopSlicer } from '../core/event-loop-slices.ts';
import type { ModerationModel, ModerationVerdict } from '../core/language-model.ts';
import { isServiceError } from '../core/service-error.ts';
import { emptyUsage } from '../core/usage.ts';
import { decodeModerationRequest } from '../formats/openai-moderations/decode-request.ts';
import { encodeModerationResponse } from '../formats/openai-moderations/encode-response.ts';
import { ledgerContextOf } from '../services/caller.ts';
import { callerOf, defaultModelWith } from './metering-context.ts';

export interface ModerationRouteDependencies {
  /** The catalogue: the default model is its first model with the `moderation` capability. */
  config: Pick<Config, 'models' | 'providers'>;
  /** Model lookup by id or alias with a capability check (GenerationService.resolve). */
  models: { resolve(modelName: string, needs?: readonly Capability[], param?: string): { model: ModelConfig } };
  /** Backends (ProviderRegistry). */
  registry: { moderationModel(model: ModelConfig): ModerationModel };
}

export function registerModerationRoutes(app: FastifyInstance, dependencies: ModerationRouteDependencies): void {
  app.post(
    '/v1/moderations',
    {
      config: {
        switchyard: {
          permission: 'moderations',
          limits: 'tokens',
          summary: 'Classify texts for hate, self-harm, sexual and violent content.',
        },
      },
    },
    async (request, reply) => {
      const decoded = decodeModerationRequest(request.body);
      const { model } = dependencies.models.resolve(
        decoded.model ?? defaultModelWith(dependencies.config.models, 'moderation', 'moderation'),
        ['moderation'],
      );
      const slicer = new EventLoopSlicer();
      let inputTokens = 0;
      for (const input of decoded.inputs) inputTokens += await countTextTokensAsync(input, slicer);
      const admission = await request.admit(inputTokens);
      const caller = callerOf(request);
      const ledger = ledgerContextOf(caller, model, '/v1/moderations');
      let verdicts: ModerationVerdict[];
      const call =
        request.trace === undefined
          ? undefined
          : startModelCallTrace(request.trace, 'switchyard.moderation', model, dependencies.config.providers[model.provider]);
      try {
        const options = {
          signal: request.clientSignal(),
          requestId: request.id,
          tenant: caller.auth.organizationId,
          ...(call === undefined ? {} : { trace: call }),
        };
        verdicts = await spanUntil(call, dependencies.registry.moderationModel(model).classify(decoded.inputs, options));
      } catch (error) {
        await admission.settle(undefined, ledger, isServiceError(error) ? error.status : 500);
        throw error;
      }
      await admission.settle({ ...emptyUsage(), inputTokens, estimated: true }, ledger);
      return reply.sendData({ ...encodeModerationResponse({ model: model.id, verdicts }) });
    },
  );
}
