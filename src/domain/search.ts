// What a title search looks for: the words of what was typed, each matched as
// the start of a word in the title, all of them required. A word is a run of
// letters and digits in any script; everything else separates words. A
// search must keep to the rules below (searchRuleBroken), which bound what one
// search can cost whatever the titles hold: a one-letter prefix, or many
// words, would make the text index read far more than the searcher's pauses.

/** Each word needs at least this many letters or digits. */
export const MIN_WORD_LENGTH = 2;
/** A search has at most this many words. */
export const MAX_SEARCH_WORDS = 4;
/** A longer word is cut to this many characters (titles are at most 200). */
const MAX_WORD_LENGTH = 64;

const WORD = /[\p{L}\p{N}]+/gu;

/** The distinct words of what was typed, lower case; none when it has no letter or digit. */
export function searchWords(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
  return [...new Set(words.map((word) => word.slice(0, MAX_WORD_LENGTH)))];
}

/** Which rule the words break, in a sentence naming it, or undefined when they keep to them all. */
export function searchRuleBroken(
  words: string[],
): { rule: 'min_word_length' | 'max_words'; message: string } | undefined {
  if (words.length > MAX_SEARCH_WORDS) {
    return {
      rule: 'max_words',
      message: `Search for at most ${MAX_SEARCH_WORDS} words at once (this search has ${words.length}).`,
    };
  }
  const short = words.find((word) => [...word].length < MIN_WORD_LENGTH);
  if (short !== undefined) {
    return {
      rule: 'min_word_length',
      message: `Each word searched for needs at least ${MIN_WORD_LENGTH} letters or digits (“${short}” is too short).`,
    };
  }
  return undefined;
}

/** A word without its accents, as SQLite's text index folds them (remove_diacritics). */
const folded = (word: string) => word.normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC');

/**
 * Whether each of the words starts a word of the title, accents aside: the
 * check SQLite's search makes itself for words longer than its text index's
 * prefixes (see store/pause-search.ts).
 */
export function titleHasWords(title: string, words: string[]): boolean {
  const titleWords = (folded(title.normalize('NFKC').toLowerCase()).match(WORD) ?? []) as string[];
  return words.every((word) => {
    const start = folded(word);
    return titleWords.some((titleWord) => titleWord.startsWith(start));
  });
}
