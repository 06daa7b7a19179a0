// The Standard Schema (https://standardschema.dev) and Standard JSON Schema
// interfaces, as the spec asks: copied, not depended on. A schema library
// that implements both (zod 4.2 and later, among others) can describe a
// pause's form: the SDK sends its JSON Schema and parses the answer with it.

/** The result of a Standard Schema's `validate`: the parsed value, or the issues. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

/** One problem `validate` found, with where (`path`). */
export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The options of a Standard JSON Schema converter: the SDK asks for `draft-2020-12`. */
export interface StandardJsonSchemaOptions {
  readonly target: 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | ({} & string);
  readonly libraryOptions?: Record<string, unknown> | undefined;
}

/** A Standard Schema that can also give its JSON Schema (Standard JSON Schema), e.g. a zod 4 object. */
export interface StandardSchemaWithJson<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly validate: (
      value: unknown,
      options?: { readonly libraryOptions?: Record<string, unknown> | undefined } | undefined,
    ) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly jsonSchema: {
      readonly input: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
      readonly output: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
    };
  };
}

/** What the schema accepts: the type of a form's proposed values. */
export type StandardInput<Schema extends StandardSchemaWithJson> = NonNullable<Schema['~standard']['types']>['input'];
/** What the schema parses to: the type of a form's answered values. */
export type StandardOutput<Schema extends StandardSchemaWithJson> = NonNullable<Schema['~standard']['types']>['output'];

/** Whether `value` is a Standard Schema (with or without a JSON Schema converter). */
export function isStandardSchema(value: unknown): value is { readonly '~standard': Record<string, unknown> } {
  if (typeof value !== 'object' && typeof value !== 'function') return false;
  const props = (value as { '~standard'?: unknown } | null)?.['~standard'];
  return (
    typeof props === 'object' && props !== null && typeof (props as { validate?: unknown }).validate === 'function'
  );
}
