// How many values a JSON body holds, counted over its bytes in one pass
// before they are decoded and parsed, so a body of hundreds of thousands of
// tiny values is refused for the price of reading it once. Counting bytes
// rather than characters is exact: in UTF-8 every byte of a multi-byte
// character is 0x80 or above, so none is mistaken for a quote or a comma.

/** More values than this in one JSON body is refused; no real request comes close. */
export const MAX_JSON_VALUES = 20_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;

/**
 * One more than the commas and opening brackets outside strings: every value
 * after the first follows a comma or opens its array or object, so this is at
 * least the number of values (an empty array or object counts twice). Stops
 * counting once past `stopAfter`.
 */
export function countJsonValues(text: Uint8Array, stopAfter = MAX_JSON_VALUES): number {
  let count = 1;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text[i];
    if (code === QUOTE) {
      i = endOfString(text, i);
    } else if (code === COMMA || code === OPEN_BRACKET || code === OPEN_BRACE) {
      count += 1;
      if (count > stopAfter) return count;
    }
  }
  return count;
}

/** The index of the quote that closes the string opened at `open` (or the end of the text). */
function endOfString(text: Uint8Array, open: number): number {
  let quote = text.indexOf(QUOTE, open + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text[quote - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf(QUOTE, quote + 1);
  }
  return text.length;
}
