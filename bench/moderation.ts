/**
 * Quality of the built-in moderation classifier on bench/moderation-eval-set.jsonl: 250 texts written
 * for this purpose (45 per category, 70 benign of which 40 are "hard" benign texts such as "kill the
 * process" or "shoot a photo"), separate from the classifier's training examples.
 *
 * Prints precision and recall per category (a text counts for a category when its label is that
 * category) and overall (flagged at all vs. labelled harmful at all), plus the benign false-positive rate.
 *
 *   node --import tsx bench/moderation.ts           # evaluate the shipped settings
 *   node --import tsx bench/moderation.ts --tune    # re-derive thresholds by leave-one-out over the
 *                                                   # training examples (never the evaluation set)
 *   node --import tsx bench/moderation.ts --errors  # also list the misclassified evaluation texts
 */
import { readFileSync } from 'node:fs';
import type { ModerationCategory } from '../src/core/language-model.ts';
import { createSentenceEncoder } from '../src/providers/builtin/embedding/embedding-sentence-encoder.ts';
import {
  DEFAULT_MODERATION_SETTINGS,
  MODERATION_CATEGORIES,
  ModerationClassifier,
  combineScores,
  semanticScores,
  verdictFromScores,
} from '../src/providers/builtin/moderation/moderation-classifier.ts';
import type { CategoryScores } from '../src/providers/builtin/moderation/moderation-classifier.ts';
import type { ExampleLabel } from '../src/providers/builtin/moderation/moderation-examples.ts';

interface LabelledText {
  text: string;
  label: ExampleLabel;
  note?: string;
}

interface Counts {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
}

const evaluationSet: LabelledText[] = readFileSync(new URL('./moderation-eval-set.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim().length > 0)
  .map((line) => JSON.parse(line) as LabelledText);

function count(labels: ExampleLabel[], scores: CategoryScores[], thresholds: Record<ModerationCategory, number>): Map<string, Counts> {
  const counts = new Map<string, Counts>(
    [...MODERATION_CATEGORIES, 'overall'].map((key) => [key, { truePositives: 0, falsePositives: 0, falseNegatives: 0 }]),
  );
  const tally = (key: string, actual: boolean, predicted: boolean): void => {
    const entry = counts.get(key)!;
    if (actual && predicted) entry.truePositives++;
    else if (predicted) entry.falsePositives++;
    else if (actual) entry.falseNegatives++;
  };
  labels.forEach((label, index) => {
    const verdict = verdictFromScores(scores[index]!, thresholds);
    for (const category of MODERATION_CATEGORIES) tally(category, label === category, verdict.categories[category]);
    tally('overall', label !== 'benign', verdict.flagged);
  });
  return counts;
}

const precision = (entry: Counts): number => entry.truePositives / Math.max(1, entry.truePositives + entry.falsePositives);
const recall = (entry: Counts): number => entry.truePositives / Math.max(1, entry.truePositives + entry.falseNegatives);
const f1 = (entry: Counts): number =>
  (2 * entry.truePositives) / Math.max(1, 2 * entry.truePositives + entry.falsePositives + entry.falseNegatives);

const encoder = createSentenceEncoder();
const classifier = new ModerationClassifier(encoder);
const started = performance.now();
const bank = await classifier.exampleBank();

if (process.argv.includes('--tune')) {
  // Leave-one-out scores of every training example, then per category the threshold with the best F1
  // (the middle of the best plateau, so that the choice does not sit on an edge).
  const looScores = bank.vectors.map((vector, index) =>
    combineScores(semanticScores(vector, bank, DEFAULT_MODERATION_SETTINGS, index), classifier.lexicalScores(bank.texts[index]!)),
  );
  const tuned = { ...DEFAULT_MODERATION_SETTINGS.thresholds };
  for (const category of MODERATION_CATEGORIES) {
    const candidates: Array<{ threshold: number; f1: number }> = [];
    for (let step = 8; step <= 36; step++) {
      const threshold = step * 0.025;
      const only = { hate: 2, 'self-harm': 2, sexual: 2, violence: 2, [category]: threshold };
      candidates.push({ threshold, f1: f1(count(bank.labels, looScores, only).get(category)!) });
    }
    const best = Math.max(...candidates.map((candidate) => candidate.f1));
    const plateau = candidates.filter((candidate) => candidate.f1 >= best - 1e-9);
    tuned[category] = Number(plateau[Math.floor((plateau.length - 1) / 2)]!.threshold.toFixed(3));
  }
  console.log('thresholds tuned by leave-one-out on the training examples:', tuned);
  const loo = count(bank.labels, looScores, tuned).get('overall')!;
  console.log(`training examples, leave-one-out, overall: precision ${precision(loo).toFixed(3)} recall ${recall(loo).toFixed(3)}`);
}

const scores = await classifier.score(evaluationSet.map((row) => row.text));
const elapsed = performance.now() - started;
const counts = count(
  evaluationSet.map((row) => row.label),
  scores,
  DEFAULT_MODERATION_SETTINGS.thresholds,
);

const perLabel = new Map<string, number>();
for (const row of evaluationSet) perLabel.set(row.label, (perLabel.get(row.label) ?? 0) + 1);
console.log(
  `built-in moderation on ${evaluationSet.length} labelled texts (${[...perLabel].map(([label, n]) => `${label} ${n}`).join(', ')})`,
);
console.log('thresholds:', DEFAULT_MODERATION_SETTINGS.thresholds);
console.log('category    precision  recall   F1      (TP/FP/FN)');
for (const [key, entry] of counts) {
  console.log(
    `${key.padEnd(11)} ${precision(entry).toFixed(3).padStart(9)}  ${recall(entry).toFixed(3).padStart(6)}   ${f1(entry).toFixed(3)}   (${entry.truePositives}/${entry.falsePositives}/${entry.falseNegatives})`,
  );
}
const benign = evaluationSet.flatMap((row, index) =>
  row.label === 'benign' ? [{ row, verdict: verdictFromScores(scores[index]!, DEFAULT_MODERATION_SETTINGS.thresholds) }] : [],
);
const hard = benign.filter(({ row }) => row.note === 'hard');
console.log(
  `benign flagged: ${benign.filter(({ verdict }) => verdict.flagged).length}/${benign.length} ` +
    `(hard benign: ${hard.filter(({ verdict }) => verdict.flagged).length}/${hard.length})`,
);
console.log(`time: ${(elapsed / 1000).toFixed(2)} s including the example bank (${bank.texts.length} examples)`);

if (process.argv.includes('--errors')) {
  evaluationSet.forEach((row, index) => {
    const verdict = verdictFromScores(scores[index]!, DEFAULT_MODERATION_SETTINGS.thresholds);
    const flagged = MODERATION_CATEGORIES.filter((category) => verdict.categories[category]);
    const correct = row.label === 'benign' ? flagged.length === 0 : flagged.includes(row.label);
    if (!correct) console.log(`  ${row.label} -> ${flagged.join(',') || 'none'}: ${row.text}`);
  });
}
await encoder.close();
