/**
 * Encodes moderation verdicts as the moderation result (docs/spec.md "Moderation result", which wins over
 * OpenAI's longer category list: exactly `hate`, `self-harm`, `sexual`, `violence`): `{id: "modr-…",
 * model, results: [{flagged, categories, category_scores}]}`, one result per input, in input order.
 * `_metadata` is added by the HTTP edge.
 */
import type { ModerationCategory, ModerationVerdict } from '../../core/language-model.ts';
import { newId } from '../../core/ids.ts';

export interface ModerationResultObject {
  flagged: boolean;
  categories: Record<ModerationCategory, boolean>;
  /** Scores in 0..1 per category. */
  category_scores: Record<ModerationCategory, number>;
}

export interface ModerationResponseBody {
  /** `modr-` followed by 24 alphanumerics. */
  id: string;
  model: string;
  results: ModerationResultObject[];
}

export function encodeModerationResponse(input: { model: string; verdicts: ModerationVerdict[]; id?: string }): ModerationResponseBody {
  return {
    id: input.id ?? newId.moderation(),
    model: input.model,
    results: input.verdicts.map((verdict) => ({
      flagged: verdict.flagged,
      // Fixed key order, whatever order the verdict was built in.
      categories: {
        hate: verdict.categories.hate,
        'self-harm': verdict.categories['self-harm'],
        sexual: verdict.categories.sexual,
        violence: verdict.categories.violence,
      },
      category_scores: {
        hate: clampScore(verdict.categoryScores.hate),
        'self-harm': clampScore(verdict.categoryScores['self-harm']),
        sexual: clampScore(verdict.categoryScores.sexual),
        violence: clampScore(verdict.categoryScores.violence),
      },
    })),
  };
}

function clampScore(score: number): number {
  return Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0;
}
