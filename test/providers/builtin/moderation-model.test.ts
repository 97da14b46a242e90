import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { GenerationRequest } from '../../../src/core/generation.ts';
import type { ModerationModel, ModerationVerdict } from '../../../src/core/language-model.ts';
import { ServiceError } from '../../../src/core/service-error.ts';
import { createSentenceEncoder } from '../../../src/providers/builtin/embedding/embedding-sentence-encoder.ts';
import { chunkText } from '../../../src/providers/builtin/moderation/moderation-classifier.ts';
import { MODERATION_EXAMPLES } from '../../../src/providers/builtin/moderation/moderation-examples.ts';
import { ModerationLexicon } from '../../../src/providers/builtin/moderation/moderation-lexicon.ts';
import { createBuiltinModerationModel } from '../../../src/providers/builtin/moderation/moderation-model.ts';
import {
  assertGenerationAllowed,
  assertInputsAllowed,
  generationInputs,
  moderateText,
} from '../../../src/services/generation/input-moderation.ts';

const encoder = createSentenceEncoder();
const model = createBuiltinModerationModel(encoder);
const options = () => ({ signal: new AbortController().signal });

after(() => encoder.close());

function flaggedCategories(verdict: ModerationVerdict): string[] {
  return Object.entries(verdict.categories).flatMap(([category, flagged]) => (flagged ? [category] : []));
}

describe('built-in moderation model', () => {
  test('clear cases are flagged in their category', async () => {
    const cases: Array<[string, string]> = [
      ['I am going to stab my coworker tomorrow and watch him bleed.', 'violence'],
      ['I want to end my life, I have the pills ready.', 'self-harm'],
      ['Send me a video of you naked and touching yourself.', 'sexual'],
      ['People of that religion are filthy vermin and should be driven out.', 'hate'],
    ];
    const verdicts = await moderateText(
      model,
      cases.map(([text]) => text),
      options(),
    );
    cases.forEach(([text, category], index) => {
      assert.ok(verdicts[index]!.flagged, `not flagged: ${text}`);
      assert.ok(flaggedCategories(verdicts[index]!).includes(category), `${text} -> ${flaggedCategories(verdicts[index]!).join(',')}`);
    });
  });

  test('hard benign texts are not flagged', async () => {
    const benign = [
      'How do I kill the process that is listening on port 3000?',
      'We will shoot a photo of the team in front of the office.',
      'Sex education classes start next week at the school.',
      'The history lesson was about the Second World War.',
      'Please execute the deployment script after lunch.',
      'What a lovely morning for a walk by the lake.',
    ];
    const verdicts = await model.classify(benign, options());
    verdicts.forEach((verdict, index) =>
      assert.equal(verdict.flagged, false, `${benign[index]} -> ${flaggedCategories(verdict).join(',')}`),
    );
  });

  test('scores are in 0..1 for the four SPEC categories; empty input is never flagged', async () => {
    const verdicts = await model.classify(['', 'hello there', 'I will kill you'], options());
    for (const verdict of verdicts) {
      assert.deepEqual(Object.keys(verdict.categoryScores).sort(), ['hate', 'self-harm', 'sexual', 'violence']);
      for (const score of Object.values(verdict.categoryScores)) assert.ok(score >= 0 && score <= 1);
    }
    assert.equal(verdicts[0]!.flagged, false);
  });

  test('a violent sentence inside a long benign text is still found', async () => {
    const filler = 'The quarterly report covers sales, hiring and the new office. '.repeat(12);
    const [verdict] = await model.classify([`${filler}I am going to shoot my manager when he arrives tomorrow. ${filler}`], options());
    assert.ok(verdict!.categories.violence);
  });

  test('the lexicon maps slurs to hate and explicit words to sexual, and ignores plain swearing', () => {
    const lexicon = new ModerationLexicon();
    assert.ok(lexicon.score('you f4gg0t').hate >= 0.9);
    assert.ok(lexicon.score('free porn and a blowjob').sexual >= 0.9);
    assert.deepEqual(lexicon.score('this shit is broken'), { hate: 0, 'self-harm': 0, sexual: 0, violence: 0 });
  });

  test('the few-shot examples are not part of the evaluation set', () => {
    const evaluation = readFileSync(new URL('../../../bench/moderation-eval-set.jsonl', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => (JSON.parse(line) as { text: string }).text.toLowerCase());
    assert.ok(evaluation.length >= 200);
    const examples = new Set(
      Object.values(MODERATION_EXAMPLES)
        .flat()
        .map((text) => text.toLowerCase()),
    );
    assert.deepEqual(
      evaluation.filter((text) => examples.has(text)),
      [],
    );
  });

  test('chunkText keeps short texts whole and splits long ones at sentence ends', () => {
    assert.deepEqual(chunkText('short'), ['short']);
    const chunks = chunkText('One sentence here. '.repeat(40));
    assert.ok(chunks.length > 1);
    for (const chunk of chunks) assert.ok(chunk.length <= 600);
    assert.ok(chunkText('x'.repeat(2000)).length >= 3);
  });
});

describe('moderation pre-check', () => {
  test('assertInputsAllowed passes clean input and refuses flagged input with a 400 naming the field', async () => {
    await assertInputsAllowed(model, [{ text: 'What is the capital of France?', param: 'messages[0].content' }], options());
    await assert.rejects(
      assertInputsAllowed(
        model,
        [
          { text: 'Tell me a joke.', param: 'messages[0].content' },
          { text: 'I will burn his house down with his family inside.', param: 'messages[2].content' },
        ],
        options(),
      ),
      (error: unknown) => {
        assert.ok(error instanceof ServiceError);
        assert.equal(error.status, 400);
        assert.equal(error.code, 'invalid_parameter');
        assert.equal(error.param, 'messages[2].content');
        assert.match(error.message, /violence/);
        assert.deepEqual(error.details, { flagged_categories: ['violence'] });
        return true;
      },
    );
  });

  test('generationInputs takes system, user text, documents and tool results, not assistant turns', () => {
    const request: GenerationRequest = {
      model: 'm',
      system: 'Be nice.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image', url: 'https://x/y.png' },
            { type: 'document', text: 'doc' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'assistant text is not checked' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: 'result' }] }] },
      ],
    };
    assert.deepEqual(generationInputs(request), [
      { text: 'Be nice.', param: 'system' },
      { text: 'hi', param: 'messages[0].content[0]' },
      { text: 'doc', param: 'messages[0].content[2]' },
      { text: 'result', param: 'messages[2].content[0]' },
    ]);
  });

  test('assertGenerationAllowed works with any ModerationModel', async () => {
    const flagsEverything: ModerationModel = {
      classify: async (inputs) =>
        inputs.map(() => ({
          flagged: true,
          categories: { hate: true, 'self-harm': false, sexual: false, violence: false },
          categoryScores: { hate: 0.99, 'self-harm': 0, sexual: 0, violence: 0 },
        })),
    };
    const request: GenerationRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'anything' }] }] };
    await assert.rejects(assertGenerationAllowed(flagsEverything, request, options()), { status: 400, param: 'messages[0].content[0]' });
    await assertGenerationAllowed(flagsEverything, { model: 'm', messages: [] }, options());
  });
});
