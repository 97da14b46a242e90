/**
 * A ModerationModel over an OpenAI-compatible `/v1/moderations` upstream, following the OpenAI API
 * reference "Moderations > Create moderation": request `{model, input: string[]}`, response
 * `{results: [{flagged, categories, category_scores}]}` in input order.
 *
 * OpenAI reports finer categories than the SPEC's four; each SPEC category takes the highest score
 * (and any flag) of its OpenAI family: `hate` <- hate, hate/threatening; `self-harm` <- self-harm,
 * self-harm/intent, self-harm/instructions; `sexual` <- sexual, sexual/minors; `violence` <- violence,
 * violence/graphic. Categories outside the four (harassment, illicit) are not reported, and `flagged`
 * means "one of the four categories is flagged", so that it always agrees with `categories`.
 */
import type { CallOptions, ModerationCategory, ModerationModel, ModerationVerdict } from '../../core/language-model.ts';
import { upstreamConnectionError } from '../../core/upstream-error.ts';
import type { UpstreamHttpClient } from '../shared/http-client.ts';
import { asArray, asNumber, asObject } from '../shared/lenient-json.ts';
import type { JsonObject } from '../shared/lenient-json.ts';
import { postOpenAICompatibleJson } from './openai-compatible-embedding-model.ts';

/** OpenAI category names that make up each SPEC category. */
const CATEGORY_FAMILIES: Record<ModerationCategory, readonly string[]> = {
  hate: ['hate', 'hate/threatening'],
  'self-harm': ['self-harm', 'self-harm/intent', 'self-harm/instructions'],
  sexual: ['sexual', 'sexual/minors'],
  violence: ['violence', 'violence/graphic'],
};

export interface OpenAICompatibleModerationSettings {
  /** Model name sent upstream (e.g. `omni-moderation-latest`). */
  upstreamModel: string;
  /** Headers sent with every request (authorization and the provider's configured headers). */
  headers: Record<string, string>;
}

/** Maps one upstream `results[]` item to a verdict over the four SPEC categories. */
export function mapOpenAIModerationResult(result: JsonObject | undefined): ModerationVerdict {
  const flags = asObject(result?.['categories']) ?? {};
  const scores = asObject(result?.['category_scores']) ?? {};
  const categories = { hate: false, 'self-harm': false, sexual: false, violence: false };
  const categoryScores = { hate: 0, 'self-harm': 0, sexual: 0, violence: 0 };
  for (const category of Object.keys(CATEGORY_FAMILIES) as ModerationCategory[]) {
    for (const name of CATEGORY_FAMILIES[category]) {
      if (flags[name] === true) categories[category] = true;
      const score = asNumber(scores[name]);
      if (score !== undefined) categoryScores[category] = Math.max(categoryScores[category], Math.min(1, Math.max(0, score)));
    }
  }
  return { flagged: Object.values(categories).some(Boolean), categories, categoryScores };
}

export class OpenAICompatibleModerationModel implements ModerationModel {
  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly settings: OpenAICompatibleModerationSettings,
  ) {}

  async classify(inputs: string[], options: CallOptions): Promise<ModerationVerdict[]> {
    if (inputs.length === 0) return [];
    const payload = { model: this.settings.upstreamModel, input: inputs };
    const body = asObject(await postOpenAICompatibleJson(this.client, '/moderations', payload, this.settings.headers, options));
    const results = asArray(body?.['results']) ?? [];
    if (results.length !== inputs.length) {
      throw upstreamConnectionError(`the provider returned ${results.length} moderation results for ${inputs.length} inputs`);
    }
    return results.map((result) => mapOpenAIModerationResult(asObject(result)));
  }
}
