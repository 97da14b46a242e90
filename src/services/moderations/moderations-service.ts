/**
 * The moderations use case (POST /v1/moderations): resolve the model (named, or the first catalogue
 * model with the `moderation` capability: the built-in classifier on a fresh install), count the input
 * tokens (in event-loop slices) and admit them against the caller's limits as embeddings do (they
 * count toward tpm and the daily and monthly totals), classify (the built-in engine serves
 * organizations in turn), meter the input tokens, encode the SPEC moderation result (the wire format
 * the composition root gives, formats/openai-moderations).
 */
import type { Config, ModelConfig } from '../../config/index.ts';
import { countTextTokensAsync } from '../../core/count-tokens.ts';
import { EventLoopSlicer } from '../../core/event-loop-slices.ts';
import type { ModerationModel, ModerationVerdict } from '../../core/language-model.ts';
import { answeredUsage } from '../../core/usage.ts';
import { spanUntil } from '../../telemetry/trace-types.ts';
import type { JsonAnswer } from '../answer.ts';
import { ledgerContextOf, type Caller } from '../caller.ts';
import { metered } from '../metering/metered.ts';
import type { MeteringService } from '../metering/metering-service.ts';
import { defaultModelWith, type ModelResolver } from '../model-lookup.ts';
import { startModelCallTrace } from '../trace-hooks.ts';

/** What the use case reads of a decoded request. */
export interface ModerationsRequest {
  /** The model as the client named it, or null for the catalogue's first moderation model. */
  model: string | null;
  /** Texts to classify, in request order. */
  inputs: string[];
}

/** The endpoint's wire format (formats/openai-moderations), given by the composition root. */
export interface ModerationsWire<Request extends ModerationsRequest> {
  decode(body: unknown): Request;
  encode(model: ModelConfig, verdicts: ModerationVerdict[]): Record<string, unknown>;
}

export interface ModerationsDependencies<Request extends ModerationsRequest> {
  /** The catalogue: the default model is its first model with the `moderation` capability. */
  config: Pick<Config, 'models' | 'providers'>;
  models: ModelResolver;
  /** Backends (ProviderRegistry). */
  registry: { moderationModel(model: ModelConfig): ModerationModel };
  /** Rate limits, quotas and the ledger. */
  metering: Pick<MeteringService, 'admit'>;
  wire: ModerationsWire<Request>;
}

export class ModerationsService<Request extends ModerationsRequest = ModerationsRequest> {
  constructor(private readonly dependencies: ModerationsDependencies<Request>) {}

  async run(caller: Caller, body: unknown): Promise<JsonAnswer> {
    const { wire, models, config } = this.dependencies;
    const decoded = wire.decode(body);
    const { model } = models.resolve(decoded.model ?? defaultModelWith(config.models, 'moderation', 'moderation'), ['moderation']);
    const slicer = new EventLoopSlicer();
    let inputTokens = 0;
    for (const input of decoded.inputs) inputTokens += await countTextTokensAsync(input, slicer);
    const ledger = ledgerContextOf(caller, model, '/v1/moderations');
    const { value: verdicts, admission } = await metered(this.dependencies.metering, caller, inputTokens, ledger, async () => ({
      value: await this.classify(caller, model, decoded.inputs),
      usage: answeredUsage({ inputTokens, estimated: true }),
    }));
    return { stream: false, body: wire.encode(model, verdicts), headers: admission.headers, admission };
  }

  private classify(caller: Caller, model: ModelConfig, inputs: string[]): Promise<ModerationVerdict[]> {
    const { config, registry } = this.dependencies;
    const call =
      caller.trace === undefined
        ? undefined
        : startModelCallTrace(caller.trace, 'switchyard.moderation', model, config.providers[model.provider]);
    const options = {
      signal: caller.signal,
      requestId: caller.requestId,
      tenant: caller.auth.organizationId,
      ...(call === undefined ? {} : { trace: call }),
    };
    return spanUntil(call, registry.moderationModel(model).classify(inputs, options));
  }
}
