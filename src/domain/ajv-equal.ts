import { createRequire } from 'node:module';

// Ajv compares values for `uniqueItems`, `enum` and `const` with
// fast-deep-equal, which calls an object's own `toString` or `valueOf` when it
// has one. JSON may name a field `toString`: `[{"toString": ""}, {}]` against
// `uniqueItems` then throws a TypeError out of the validator, a 500 where a
// 400 belongs (ajv-validator/ajv#2624, open). Ajv reads its comparison from
// this one module when it compiles a schema, so every validator in the
// process (request bodies, form values) compares with jsonEqual once this
// module is loaded; import it before compiling.

/** Deep equality of JSON values: arrays item by item, objects by their own keys. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b);
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  return keys.every((key) => Object.hasOwn(right, key) && jsonEqual(left[key], right[key]));
}

const runtime = createRequire(import.meta.url)('ajv/dist/runtime/equal') as { default: { code: string } };
runtime.default = Object.assign(jsonEqual, { code: runtime.default.code });
