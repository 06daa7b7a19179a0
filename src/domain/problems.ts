// A refused input, field by field: every rule that finds one says it this way.

export interface FieldProblem {
  /** The field's path, with dots, e.g. `reviewers.2.email`. */
  field: string;
  /** What is wrong, in words that follow the field's name. */
  problem: string;
}
