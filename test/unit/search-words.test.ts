import { expect, it } from 'vitest';
import { MAX_SEARCH_WORDS, searchWords } from '../../src/domain/search.js';

it('takes the words of what was typed: letters and digits of any script, lower case, each once', () => {
  expect(searchWords('  Deploy API-v2 to PROD? deploy ')).toEqual(['deploy', 'api', 'v2', 'to', 'prod']);
  expect(searchWords('Zoë 東京 ２０２６')).toEqual(['zoë', '東京', '2026']);
  expect(searchWords('"*() AND OR NEAR:')).toEqual(['and', 'or', 'near']);
  expect(searchWords('<script>"\'')).toEqual(['script']);
  expect(searchWords('* - ""')).toEqual([]);
});

it('keeps at most eight words of at most 64 characters', () => {
  expect(searchWords('a b c d e f g h i j')).toHaveLength(MAX_SEARCH_WORDS);
  expect(searchWords('x'.repeat(100))).toEqual(['x'.repeat(64)]);
});
