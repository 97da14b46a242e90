/**
 * The built-in `ModerationModel` (`ModerationClassifier`: lexicon + few-shot classifier on the sentence
 * encoder). The pre-check on generation inputs that uses any ModerationModel lives in
 * services/generation/input-moderation.ts.
 */
import type { ModerationModel, ModerationVerdict, CallOptions } from '../../../core/language-model.ts';
import { leaseSharedSentenceEncoder } from '../embedding/embedding-sentence-encoder.ts';
import type { SentenceEncoder } from '../embedding/embedding-sentence-encoder.ts';
import { DEFAULT_MODERATION_SETTINGS, ModerationClassifier } from './moderation-classifier.ts';
import type { ModerationClassifierSettings } from './moderation-classifier.ts';

export function createBuiltinModerationModel(
  encoder: SentenceEncoder,
  settings: ModerationClassifierSettings = DEFAULT_MODERATION_SETTINGS,
): ModerationModel {
  const classifier = new ModerationClassifier(encoder, settings);
  return {
    classify: (inputs: string[], options: CallOptions): Promise<ModerationVerdict[]> =>
      classifier.classify(inputs, options.signal, options.tenant),
  };
}

/**
 * The engine the built-in provider plugs in (engine name `moderation`): the classifier on the encoder
 * shared by every built-in engine of `owner` (the provider's context object). `close()` releases this
 * engine's hold on the encoder.
 */
export function createBuiltinModerationEngine(owner: object): ModerationModel & { close(): Promise<void> } {
  const lease = leaseSharedSentenceEncoder(owner);
  return { ...createBuiltinModerationModel(lease.encoder), close: () => lease.release() };
}
