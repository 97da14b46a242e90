import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { closestName, didYouMean, editDistance } from '../../src/core/closest-name.ts';

describe('closest name', () => {
  test('edit distance counts insertions, deletions and substitutions', () => {
    assert.equal(editDistance('', ''), 0);
    assert.equal(editDistance('echo', 'ecko'), 1);
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('abc', ''), 3);
  });

  test('suggests the nearest name within a third of the length, ignoring case; ties go to the first', () => {
    const catalogue = ['switchyard-echo', 'switchyard-embeddings', 'switchyard-images', 'gpt-4o-mini'];
    assert.equal(closestName('switchyard-ecko', catalogue), 'switchyard-echo');
    assert.equal(closestName('SWITCHYARD-IMAGE', catalogue), 'switchyard-images');
    assert.equal(closestName('gpt-4o-mni', catalogue), 'gpt-4o-mini');
    assert.equal(closestName('claude', catalogue), undefined);
    assert.equal(closestName('ab', ['xy', 'ab']), undefined, 'an exact name is not suggested to itself');
    assert.equal(closestName('aa', ['ab', 'ba']), 'ab');
    assert.equal(didYouMean('org-swichyard-ai', ['org-switchyard-ai']), " Did you mean 'org-switchyard-ai'?");
    assert.equal(didYouMean('nothing-alike', ['org-switchyard-ai']), '');
  });
});
