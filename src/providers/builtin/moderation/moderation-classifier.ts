/**
 * The built-in moderation classifier: a few-shot k-nearest-neighbour classifier on the sentence encoder,
 * combined with a lexicon (obscenity).
 *
 * Semantic half: every labelled example of `moderation-examples.ts` is embedded once. A text's
 * similarity to a label is the mean cosine similarity of its `neighbours` nearest examples of that
 * label. The similarities of the five labels (four categories and benign) plus a constant "background"
 * similarity go through a softmax with `temperature`; the background absorbs texts that resemble none
 * of the examples, so that an unusual but harmless text is not forced into the nearest category.
 * Lexical half: `ModerationLexicon` evidence. The two are combined per category as independent
 * evidence: score = 1 - (1 - semantic) * (1 - lexical). A category is flagged when its score reaches
 * its threshold.
 *
 * Texts of several sentences are also judged sentence by sentence (`chunkText`); a category's semantic
 * score is its highest over the pieces (one violent sentence in a long letter is still violent).
 *
 * The settings below were tuned by `bench/moderation.ts --tune` (leave-one-out over the training
 * examples only); its quality on the separate evaluation set is printed by `bench/moderation.ts`.
 */
import type { ModerationCategory, ModerationVerdict } from '../../../core/language-model.ts';
import type { SentenceEncoder } from '../embedding/embedding-sentence-encoder.ts';
import { MODERATION_EXAMPLES } from './moderation-examples.ts';
import type { ExampleLabel } from './moderation-examples.ts';
import { ModerationLexicon } from './moderation-lexicon.ts';
import type { Cancellation } from '../../../core/cancellation.ts';
import { EventLoopSlicer } from '../../../core/event-loop-slices.ts';

export const MODERATION_CATEGORIES: readonly ModerationCategory[] = ['hate', 'self-harm', 'sexual', 'violence'];
const EXAMPLE_LABELS: readonly ExampleLabel[] = [...MODERATION_CATEGORIES, 'benign'];

export interface ModerationClassifierSettings {
  /** Nearest examples averaged per label (a count). */
  neighbours: number;
  /** Softmax temperature over cosine similarities (unitless; smaller is sharper). */
  temperature: number;
  /** Cosine similarity of the constant background label that absorbs texts like no example. */
  backgroundSimilarity: number;
  /** Score (0..1) from which a category is flagged. */
  thresholds: Record<ModerationCategory, number>;
}

export const DEFAULT_MODERATION_SETTINGS: ModerationClassifierSettings = {
  neighbours: 3,
  temperature: 0.05,
  backgroundSimilarity: 0.4,
  thresholds: { hate: 0.725, 'self-harm': 0.55, sexual: 0.5, violence: 0.375 },
};

/** Texts up to this many characters are also judged whole, for context across their sentences. */
const WHOLE_TEXT_CHARACTERS = 400;
/** A sentence shorter than this many characters is joined to the previous one ("Yes. I will."). */
const MIN_CHUNK_CHARACTERS = 40;
/** A sentence longer than this many characters is cut at word boundaries. */
const MAX_CHUNK_CHARACTERS = 300;
/** Chunks embedded per text at most; text beyond them is judged by the lexicon alone. */
const MAX_CHUNKS_PER_TEXT = 200;
/** Chunks embedded per request at most (shared equally by its texts past that); the rest, lexicon alone. */
const MAX_CHUNKS_PER_REQUEST = 1024;

/** The embedded examples: `vectors[i]` has label `labels[i]`. */
export interface ExampleBank {
  labels: ExampleLabel[];
  texts: string[];
  vectors: Float32Array[];
}

export type CategoryScores = Record<ModerationCategory, number>;

function dot(left: Float32Array, right: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < left.length; index++) sum += left[index]! * right[index]!;
  return sum;
}

/**
 * Semantic scores of one embedded text against the bank. `excludeIndex` leaves one example out (used to
 * tune the settings by leave-one-out over the examples themselves).
 */
export function semanticScores(
  vector: Float32Array,
  bank: ExampleBank,
  settings: ModerationClassifierSettings,
  excludeIndex = -1,
): CategoryScores {
  const similarities = new Map<ExampleLabel, number[]>(EXAMPLE_LABELS.map((label) => [label, []]));
  bank.vectors.forEach((example, index) => {
    if (index !== excludeIndex) similarities.get(bank.labels[index]!)!.push(dot(vector, example));
  });
  const labelSimilarity = EXAMPLE_LABELS.map((label) => {
    const nearest = similarities
      .get(label)!
      .sort((left, right) => right - left)
      .slice(0, settings.neighbours);
    return nearest.length === 0 ? -1 : nearest.reduce((sum, value) => sum + value, 0) / nearest.length;
  });
  // Softmax with the background label; subtracting the maximum keeps exp() finite.
  const logits = [...labelSimilarity, settings.backgroundSimilarity].map((similarity) => similarity / settings.temperature);
  const highest = Math.max(...logits);
  const weights = logits.map((logit) => Math.exp(logit - highest));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return {
    hate: weights[0]! / total,
    'self-harm': weights[1]! / total,
    sexual: weights[2]! / total,
    violence: weights[3]! / total,
  };
}

/** Noisy-or of semantic and lexical evidence, per category. */
export function combineScores(semantic: CategoryScores, lexical: CategoryScores): CategoryScores {
  const combine = (category: ModerationCategory): number => 1 - (1 - semantic[category]) * (1 - lexical[category]);
  return { hate: combine('hate'), 'self-harm': combine('self-harm'), sexual: combine('sexual'), violence: combine('violence') };
}

export function verdictFromScores(scores: CategoryScores, thresholds: Record<ModerationCategory, number>): ModerationVerdict {
  const categories = {
    hate: scores.hate >= thresholds.hate,
    'self-harm': scores['self-harm'] >= thresholds['self-harm'],
    sexual: scores.sexual >= thresholds.sexual,
    violence: scores.violence >= thresholds.violence,
  };
  return { flagged: Object.values(categories).some(Boolean), categories, categoryScores: { ...scores } };
}

/** Where sentences end: after `.`, `!`, `?`, `;` or a line break, at the whitespace that follows. */
const SENTENCE_BREAK = /(?<=[.!?;\n])\s+/g;

/**
 * The pieces of a text that are embedded and scored: the whole text when it is short, and each sentence
 * when there are several (very short sentences joined to the one before, very long ones cut at words).
 * One sentence judged alone is not diluted by harmless sentences around it. At most `maxChunks` pieces
 * (besides the whole text): the text is read only as far as they need, so a huge text costs no more
 * than its first pieces.
 */
export function chunkText(text: string, maxChunks = Number.POSITIVE_INFINITY): string[] {
  const chunks: string[] = [];
  const addSentence = (sentence: string): void => {
    while (sentence.length > MAX_CHUNK_CHARACTERS && chunks.length < maxChunks) {
      const cut = sentence.lastIndexOf(' ', MAX_CHUNK_CHARACTERS);
      const at = cut > MIN_CHUNK_CHARACTERS ? cut : MAX_CHUNK_CHARACTERS;
      chunks.push(sentence.slice(0, at));
      sentence = sentence.slice(at).trimStart();
    }
    if (sentence.length > 0 && chunks.length < maxChunks) chunks.push(sentence);
  };
  // A sentence is complete once the next one starts and it is long enough not to be joined to it.
  let pending: string | undefined;
  const takeSentence = (raw: string): void => {
    const trimmed = raw.trim();
    if (trimmed.length === 0) return;
    if (pending === undefined) pending = trimmed;
    else if (pending.length < MIN_CHUNK_CHARACTERS) pending = `${pending} ${trimmed}`;
    else {
      addSentence(pending);
      pending = trimmed;
    }
  };
  const breaks = new RegExp(SENTENCE_BREAK.source, SENTENCE_BREAK.flags);
  let start = 0;
  for (let match = breaks.exec(text); match !== null && chunks.length < maxChunks; match = breaks.exec(text)) {
    takeSentence(text.slice(start, match.index));
    start = match.index + match[0].length;
  }
  if (chunks.length < maxChunks) {
    takeSentence(text.slice(start));
    if (pending !== undefined) addSentence(pending);
  }
  if (chunks.length <= 1) return [text];
  return text.length <= WHOLE_TEXT_CHARACTERS ? [text, ...chunks] : chunks;
}

/**
 * Pieces per text when a request's texts together would have more than MAX_CHUNKS_PER_REQUEST: an
 * equal share each (at least one), so a request of many long texts stays bounded too.
 */
function chunksPerTextLimit(textCount: number): number {
  return Math.max(1, Math.min(MAX_CHUNKS_PER_TEXT, Math.floor(MAX_CHUNKS_PER_REQUEST / textCount)));
}

export class ModerationClassifier {
  private readonly lexicon = new ModerationLexicon();
  private bank: Promise<ExampleBank> | null = null;

  constructor(
    private readonly encoder: SentenceEncoder,
    private readonly settings: ModerationClassifierSettings = DEFAULT_MODERATION_SETTINGS,
    private readonly examples: Record<ExampleLabel, readonly string[]> = MODERATION_EXAMPLES,
  ) {}

  /**
   * The embedded examples, computed on first use and kept: 202 texts in 26 of the encoder's 400-character slices
   * (3-10 s of worker time on this 2-core machine under load), while other organizations' work goes in turn.
   */
  exampleBank(): Promise<ExampleBank> {
    if (this.bank === null) {
      const labels = EXAMPLE_LABELS.flatMap((label) => this.examples[label].map(() => label));
      const texts = EXAMPLE_LABELS.flatMap((label) => [...this.examples[label]]);
      this.bank = this.encoder.embed(texts).then((vectors) => ({ labels, texts, vectors }));
      // A failed load (worker crash) is retried by the next call instead of being cached.
      this.bank.catch(() => {
        this.bank = null;
      });
    }
    return this.bank;
  }

  /** Lexical evidence alone, for one text. */
  lexicalScores(text: string): CategoryScores {
    return this.lexicon.score(text);
  }

  /**
   * Combined scores per text, in input order. The encoder serves `tenant` in turn with other tenants;
   * the work on the event loop (chunking, the lexicon over long texts, scoring every piece against
   * the examples) yields between slices (core/event-loop-slices.ts).
   */
  async score(texts: string[], signal?: Cancellation, tenant?: string): Promise<CategoryScores[]> {
    const bank = await this.exampleBank();
    if (signal?.aborted === true) throw signal.reason;
    const slicer = new EventLoopSlicer();
    const maxChunks = chunksPerTextLimit(texts.length);
    const chunksPerText: string[][] = [];
    for (const text of texts) {
      const chunks = chunkText(text, maxChunks);
      chunksPerText.push(chunks.length > maxChunks ? chunks.slice(0, maxChunks) : chunks);
      await slicer.checkpoint();
    }
    // The lexicon reads the texts (one after another, in slices) while the encoder works on their pieces.
    const lexical = (async (): Promise<CategoryScores[]> => {
      const results: CategoryScores[] = [];
      for (const text of texts) {
        results.push(await this.lexicon.scoreInSlices(text, slicer));
        await slicer.checkpoint();
      }
      return results;
    })();
    // Settled below; never an unhandled rejection while the encoder is awaited.
    lexical.catch(() => undefined);
    const vectors = await this.encoder.embed(chunksPerText.flat(), signal, tenant);
    const lexicalScores = await lexical;
    const scores: CategoryScores[] = [];
    let offset = 0;
    for (let index = 0; index < texts.length; index++) {
      const chunkCount = chunksPerText[index]!.length;
      const semantic: CategoryScores = { hate: 0, 'self-harm': 0, sexual: 0, violence: 0 };
      for (let chunk = offset; chunk < offset + chunkCount; chunk++) {
        const chunkScores = semanticScores(vectors[chunk]!, bank, this.settings);
        for (const category of MODERATION_CATEGORIES) semantic[category] = Math.max(semantic[category], chunkScores[category]);
        await slicer.checkpoint();
      }
      offset += chunkCount;
      scores.push(combineScores(semantic, lexicalScores[index]!));
    }
    return scores;
  }

  async classify(texts: string[], signal?: Cancellation, tenant?: string): Promise<ModerationVerdict[]> {
    const scores = await this.score(texts, signal, tenant);
    return scores.map((categoryScores) => verdictFromScores(categoryScores, this.settings.thresholds));
  }
}
