/**
 * The moderation pre-check on generation inputs: when the caller's tier or the requested
 * model asks for it (`tiers.<name>.moderateInputs`, `models[].moderateInputs`), the request's user
 * inputs are classified by the catalogue's moderation model before anything is reserved or sent
 * upstream; a flagged input is refused with a 400 naming its field. Works with any ModerationModel
 * (the built-in classifier or an upstream's).
 */
import type { AuthContext } from '../caller-identity.ts';
import { effectiveTiers, type Config, type ModelConfig } from '../../config/index.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import type { CallOptions, ModerationCategory, ModerationModel, ModerationVerdict } from '../../core/language-model.ts';
import { ServiceError } from '../../core/service-error.ts';

/** Classifies texts with `model`; one verdict per text, in order. Empty input gives no verdicts. */
export async function moderateText(model: ModerationModel, texts: string[], options: CallOptions): Promise<ModerationVerdict[]> {
  if (texts.length === 0) return [];
  return model.classify(texts, options);
}

/** One text to check and the request field it came from (a dotted path, for the 400's `param`). */
export interface ModeratedInput {
  text: string;
  /** Dotted path of the field in the client's request, e.g. `messages[2].content`. */
  param: string;
}

function flaggedCategories(verdict: ModerationVerdict): ModerationCategory[] {
  return (Object.keys(verdict.categories) as ModerationCategory[]).filter((category) => verdict.categories[category]);
}

/**
 * The pre-check: throws a 400 `invalid_parameter` ServiceError naming the first flagged input's field
 * and categories, so that flagged input is never sent upstream. `details` carries
 * `{ flagged_categories: string[] }` for clients that want to react per category.
 */
export async function assertInputsAllowed(model: ModerationModel, inputs: ModeratedInput[], options: CallOptions): Promise<void> {
  const checked = inputs.filter((input) => input.text.trim().length > 0);
  const verdicts = await moderateText(
    model,
    checked.map((input) => input.text),
    options,
  );
  const index = verdicts.findIndex((verdict) => verdict.flagged);
  if (index === -1) return;
  const categories = flaggedCategories(verdicts[index]!);
  throw new ServiceError({
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_parameter',
    param: checked[index]!.param,
    message: `This input was refused by the service's moderation check (flagged categories: ${categories.join(', ')}). It was not sent to the model.`,
    details: { flagged_categories: categories },
  });
}

/**
 * The texts of a canonical request that the pre-check looks at: the system text and the text the user
 * sent (text parts, text documents, tool results). `param` uses canonical positions (`system`,
 * `messages[i].content[j]`); a client format whose positions differ can map them before rendering.
 */
export function generationInputs(request: GenerationRequest): ModeratedInput[] {
  const inputs: ModeratedInput[] = [];
  if (request.system !== undefined) inputs.push({ text: request.system, param: 'system' });
  request.messages.forEach((message, messageIndex) => {
    if (message.role === 'assistant') return;
    message.content.forEach((part, partIndex) => {
      const param = `messages[${messageIndex}].content[${partIndex}]`;
      if (part.type === 'text') inputs.push({ text: part.text, param });
      else if (part.type === 'document' && part.text !== undefined) inputs.push({ text: part.text, param });
      else if (part.type === 'tool-result') {
        const text =
          typeof part.content === 'string'
            ? part.content
            : part.content.flatMap((inner) => (inner.type === 'text' ? [inner.text] : [])).join('\n');
        inputs.push({ text, param });
      }
    });
  });
  return inputs;
}

/** Pre-check of a whole canonical generation request; throws a 400 when any input is flagged. */
export function assertGenerationAllowed(model: ModerationModel, request: GenerationRequest, options: CallOptions): Promise<void> {
  return assertInputsAllowed(model, generationInputs(request), options);
}

/** Where the pre-check finds its classifier: the first catalogue model with the `moderation` capability. */
export interface ModerationModelSource {
  moderationModel(model: ModelConfig): ModerationModel;
}

export class InputModeration {
  private readonly tierSwitches: ReadonlyMap<string, boolean>;
  private readonly moderationModelConfig: ModelConfig | undefined;

  constructor(
    config: Pick<Config, 'tiers' | 'retiredTiers' | 'defaultTier' | 'models'>,
    private readonly registry: ModerationModelSource,
  ) {
    this.tierSwitches = new Map(Object.entries(effectiveTiers(config)).map(([name, tier]) => [name, tier.moderateInputs]));
    this.moderationModelConfig = config.models.find((model) => model.capabilities.includes('moderation'));
  }

  /** True when this caller and model ask for the pre-check. */
  applies(auth: AuthContext, model: ModelConfig): boolean {
    return model.moderateInputs === true || this.tierSwitches.get(auth.tier) === true;
  }

  /** Throws the 400 when an input is flagged; does nothing when the pre-check does not apply. */
  async check(auth: AuthContext, model: ModelConfig, request: GenerationRequest, options: CallOptions): Promise<void> {
    if (!this.applies(auth, model)) return;
    if (this.moderationModelConfig === undefined) {
      throw new ServiceError({
        status: 500,
        type: 'server_error',
        code: 'service_unavailable',
        message: 'Input moderation is required for this request but no moderation model is configured.',
      });
    }
    // The built-in classifier serves organizations in turn: the pre-check waits in the caller's.
    await assertGenerationAllowed(this.registry.moderationModel(this.moderationModelConfig), request, {
      ...options,
      tenant: options.tenant ?? auth.organizationId,
    });
  }
}
