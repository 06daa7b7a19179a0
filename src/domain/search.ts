// What a title search looks for: the words of what was typed, each matched as
// the start of a word in the title, all of them required. A word is a run of
// letters and digits in any script; everything else separates words.

/** At most this many words count; more would only slow the search. */
export const MAX_SEARCH_WORDS = 8;
/** A longer word is cut to this many characters (titles are at most 200). */
const MAX_WORD_LENGTH = 64;

export function searchWords(text: string): string[] {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.map((word) => word.slice(0, MAX_WORD_LENGTH)))].slice(0, MAX_SEARCH_WORDS);
}
