/**
 * The token-count use case (POST /v1/messages/count_tokens): resolve the model as a generation would
 * (404 unknown, 400 not a chat model), count the prompt (in event-loop slices, core/count-tokens.ts),
 * and meter the count like embeddings: admitted against the caller's limits (it counts toward tpm and
 * the daily and monthly totals) and recorded in the ledger as the model's input tokens.
 */
import { countRequestTokensAsync } from '../../core/count-tokens.ts';
import type { DecodeOptions } from '../../core/generation-format.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import { emptyUsage } from '../../core/usage.ts';
import { ledgerContextOf, type Caller } from '../caller.ts';
import { metered, type Metered } from '../metering/metered.ts';
import type { MeteringService } from '../metering/metering-service.ts';
import type { GenerationService } from './generation-service.ts';

export interface PromptTokenCountDependencies {
  generation: Pick<GenerationService, 'resolve'>;
  metering: Pick<MeteringService, 'admit'>;
  /** How strictly the request body is read (config `requestValidation`), as for every other use case. */
  decodeOptions: DecodeOptions;
}

/** The prompt's tokens, metered as `endpoint`. */
export async function countPromptTokens(
  dependencies: PromptTokenCountDependencies,
  caller: Caller,
  request: GenerationRequest,
  endpoint: string,
): Promise<Metered<number>> {
  const { model } = dependencies.generation.resolve(request.model, ['chat']);
  const inputTokens = await countRequestTokensAsync(request);
  // Counted here, no backend called: no per-request fee.
  const usage = { ...emptyUsage(), inputTokens, estimated: true };
  return metered(dependencies.metering, caller, inputTokens, ledgerContextOf(caller, model, endpoint), async () => ({
    value: inputTokens,
    usage,
  }));
}
