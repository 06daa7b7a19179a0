import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countJsonValues, MAX_JSON_VALUES } from '../../src/http/json-values.js';

// The value count that bounds a JSON body before it is parsed.

const count = (text: string, stopAfter?: number) => countJsonValues(Buffer.from(text), stopAfter);

/** Every value of a parsed JSON document: scalars, arrays and objects. */
function valuesIn(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((sum: number, item) => sum + valuesIn(item), 0);
  if (value !== null && typeof value === 'object') {
    return 1 + Object.values(value).reduce((sum: number, item) => sum + valuesIn(item), 0);
  }
  return 1;
}

describe('countJsonValues', () => {
  it('counts every value, arrays and objects included; an empty one counts twice', () => {
    expect(count('1')).toBe(1);
    expect(count('[0,0,0]')).toBe(4);
    expect(count('{"a":1,"b":[true,null]}')).toBe(5);
    expect(count('[]')).toBe(2);
    expect(count(' { } ')).toBe(2);
  });

  it('ignores commas, brackets and escaped quotes inside strings, and multi-byte text', () => {
    expect(count('["a,b[{", "x"]')).toBe(3);
    expect(count('["say \\"[,\\"", 1]')).toBe(3);
    expect(count('["a\\\\", 1]')).toBe(3);
    expect(count('["\\\\\\"[,", 1]')).toBe(3);
    expect(count('{"ключ,🙂":"значение,[{"}')).toBe(2);
    // An unterminated string ends the count (the parser refuses the text).
    expect(count('["a,b,c')).toBe(2);
  });

  it('never counts fewer values than JSON.parse finds', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(count(text, Number.POSITIVE_INFINITY)).toBeGreaterThanOrEqual(valuesIn(JSON.parse(text)));
      }),
      { numRuns: 500 },
    );
  });

  it('stops once past the cap', () => {
    const many = `[${Array(100_000).fill('0').join(',')}]`;
    expect(count(many)).toBe(MAX_JSON_VALUES + 1);
    expect(count(many, 10)).toBe(11);
  });
});
