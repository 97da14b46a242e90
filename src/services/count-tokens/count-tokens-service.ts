/**
 * The token-count use case (POST /v1/messages/count_tokens): resolve the model as a generation would
 * (404 unknown, 400 not a chat model), count the prompt (in event-loop slices, core/count-tokens.ts,
 * the pure counter this use case bills), and meter the count like embeddings: admitted against the
 * caller's limits (it counts toward tpm and the daily and monthly totals) and recorded in the ledger
 * as the model's input tokens.
 */
import { countRequestTokensAsync } from '../../core/count-tokens.ts';
import type { DecodeOptions } from '../../core/generation-format.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import { emptyUsage } from '../../core/usage.ts';
import { ledgerContextOf, type Caller } from '../caller.ts';
import { metered, type Metered } from '../metering/metered.ts';
import type { MeteringService } from '../metering/metering-service.ts';
import type { GenerationService } from '../generation/generation-service.ts';

export interface CountTokensDependencies {
  generation: Pick<GenerationService, 'resolve'>;
  metering: Pick<MeteringService, 'admit'>;
  /** How strictly the request body is read (config `requestValidation`), as for every other use case. */
  decodeOptions: DecodeOptions;
}

export class CountTokensService {
  constructor(private readonly dependencies: CountTokensDependencies) {}

  /** How strictly the route's decoder reads the body. */
  get decodeOptions(): DecodeOptions {
    return this.dependencies.decodeOptions;
  }

  /** The prompt's tokens, metered (admitted, billed as input tokens, recorded) as `endpoint`. */
  async run(caller: Caller, request: GenerationRequest, endpoint: string): Promise<Metered<number>> {
    const { generation, metering } = this.dependencies;
    const { model } = generation.resolve(request.model, ['chat']);
    const inputTokens = await countRequestTokensAsync(request);
    // Counted here, no backend called: no per-request fee.
    const usage = { ...emptyUsage(), inputTokens, estimated: true };
    return metered(metering, caller, inputTokens, ledgerContextOf(caller, model, endpoint), async () => ({
      value: inputTokens,
      usage,
    }));
  }
}
