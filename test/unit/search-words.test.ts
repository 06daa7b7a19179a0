import { expect, it } from 'vitest';
import { MAX_SEARCH_WORDS, searchRuleBroken, searchWords, titleHasWords } from '../../src/domain/search.js';

it('takes the words of what was typed: letters and digits of any script, lower case, each once', () => {
  expect(searchWords('  Deploy API-v2 to PROD? deploy ')).toEqual(['deploy', 'api', 'v2', 'to', 'prod']);
  expect(searchWords('Zoë 東京 ２０２６')).toEqual(['zoë', '東京', '2026']);
  expect(searchWords('"*() AND OR NEAR:')).toEqual(['and', 'or', 'near']);
  expect(searchWords('<script>"\'')).toEqual(['script']);
  expect(searchWords('* - ""')).toEqual([]);
  expect(searchWords('x'.repeat(100))).toEqual(['x'.repeat(64)]);
});

it('refuses more than four words and a word of one letter, naming the rule', () => {
  expect(searchRuleBroken(searchWords('deploy api to prod'))).toBeUndefined();
  expect(searchRuleBroken(searchWords('東京 v2'))).toBeUndefined();
  expect(searchRuleBroken(searchWords('a b c d e f g h'))).toEqual({
    rule: 'max_words',
    message: `Search for at most ${MAX_SEARCH_WORDS} words at once (this search has 8).`,
  });
  expect(searchRuleBroken(searchWords('deploy 7'))?.rule).toBe('min_word_length');
  expect(searchRuleBroken(searchWords('東'))?.rule).toBe('min_word_length');
});

it('tells whether each word starts a word of the title, accents aside', () => {
  expect(titleHasWords('Deployment of the API', ['deploym', 'api'])).toBe(true);
  expect(titleHasWords('Deploy to prod', ['deployment'])).toBe(false);
  expect(titleHasWords('Refund order 42 for Zoë', ['refund', 'zoe'])).toBe(true);
  expect(titleHasWords('Déploiement du café', ['deploiement', 'café'])).toBe(true);
  expect(titleHasWords('Redeploy', ['deploy'])).toBe(false);
});
