import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeModerationResponse } from '../../../src/formats/openai-moderations/encode-response.ts';

describe('encodeModerationResponse', () => {
  test('the SPEC moderation result: modr- id, model, one result per verdict with the four categories', () => {
    const body = encodeModerationResponse({
      model: 'switchyard-moderation',
      verdicts: [
        {
          flagged: true,
          categories: { violence: true, sexual: false, 'self-harm': false, hate: false },
          categoryScores: { violence: 0.9, sexual: 0.01, 'self-harm': 0.02, hate: 1.2 },
        },
        {
          flagged: false,
          categories: { hate: false, 'self-harm': false, sexual: false, violence: false },
          categoryScores: { hate: 0, 'self-harm': Number.NaN, sexual: -1, violence: 0.1 },
        },
      ],
    });
    assert.match(body.id, /^modr-[A-Za-z0-9]{24}$/);
    assert.equal(body.model, 'switchyard-moderation');
    assert.equal(body.results.length, 2);
    assert.deepEqual(Object.keys(body.results[0]!.categories), ['hate', 'self-harm', 'sexual', 'violence']);
    assert.deepEqual(body.results[0], {
      flagged: true,
      categories: { hate: false, 'self-harm': false, sexual: false, violence: true },
      category_scores: { hate: 1, 'self-harm': 0.02, sexual: 0.01, violence: 0.9 },
    });
    // Scores stay in 0..1 whatever a backend reported.
    assert.deepEqual(body.results[1]!.category_scores, { hate: 0, 'self-harm': 0, sexual: 0, violence: 0.1 });
  });

  test('an explicit id is kept', () => {
    assert.equal(encodeModerationResponse({ model: 'm', verdicts: [], id: 'modr-fixed' }).id, 'modr-fixed');
  });
});
