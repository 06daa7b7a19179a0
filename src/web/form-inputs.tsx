import type { Child } from '@pausepoint/jsx';
import type { Form } from '../domain/form.js';
import {
  FIELD_PREFIX,
  FORM_DRAWN,
  type FormField,
  fieldText,
  formFields,
  own,
  type PostedFields,
} from '../domain/form-fields.js';
import type { FieldProblem } from '../domain/problems.js';
import type { ApiError } from '../errors.js';

// A pause's form drawn as native inputs, inside the answer's <form>, for the
// response page, a reviewer's page and the inbox: prefilled with the proposed
// values, or after a refused answer with what the person typed, each error
// beside its field. No script is needed; the browser's own checks (required,
// min, max, type) only help, the server checks everything again.

/** What a refused answer brings back to the page: what was sent, and each problem by field (`text`, `values.amount`). */
export interface Refused {
  text?: string;
  fields?: PostedFields;
  problems: FieldProblem[];
}

/** The fields an answer was refused for (`text`, `values.amount`, `choice`), or undefined for a refusal of another kind. */
export function refusedFields(error: ApiError): FieldProblem[] | undefined {
  const fields = error.details?.fields;
  return error.status === 400 && Array.isArray(fields) && fields.length > 0 ? (fields as FieldProblem[]) : undefined;
}

export const fieldId = (index: number, idSuffix = '') => `field${idSuffix}-${index}`;
export const textId = (idSuffix = '') => `text${idSuffix}`;

/** The problem of a field (one of its parts named after it: `items.0.sku must be…`), if any. */
function problemOf(problems: FieldProblem[], name: string): string | undefined {
  const field = `${FIELD_PREFIX}${name}`;
  const problem = problems.find((p) => p.field === field || p.field.startsWith(`${field}.`));
  if (!problem) return undefined;
  return problem.field === field ? problem.problem : `${problem.field.slice(field.length + 1)} ${problem.problem}`;
}

/** The page ids of a hint and an error, as aria-describedby lists them. */
const describedBy = (...ids: (string | false | undefined)[]) => ids.filter(Boolean).join(' ') || undefined;

const numberOrUndefined = (value: unknown) => (typeof value === 'number' ? value : undefined);

/** Whether a field may be left empty: it is optional, or empty stands for its null. */
const mayBeEmpty = (field: FormField) => !field.required || field.nullable;

function Input({ field, id, text, invalid, described }: InputProps) {
  const { schema, kind, name } = field;
  const required = !mayBeEmpty(field);
  const common = {
    id,
    name: `${FIELD_PREFIX}${name}`,
    'aria-invalid': invalid ? 'true' : undefined,
    'aria-describedby': described,
  };
  // A single checkbox posts one text, several a list; a text input, one text.
  const single = typeof text === 'string' ? text : (text[0] ?? '');
  const list = Array.isArray(text) ? text : text === '' ? [] : [text];
  const textArea = () => (
    <textarea
      {...common}
      class={kind.kind === 'json' ? 'json' : undefined}
      spellcheck={kind.kind === 'json' ? 'false' : undefined}
      required={required}
      minlength={numberOrUndefined(schema.minLength)}
      maxlength={numberOrUndefined(schema.maxLength)}
    >
      {/* A leading newline would be eaten by the HTML parser: one is added for it to eat. */}
      {`\n${single}`}
    </textarea>
  );
  switch (kind.kind) {
    case 'text':
      // A text input would lose the line breaks of a value that has them (an email's body in a tool's arguments).
      if (/[\r\n]/.test(single)) return textArea();
      return (
        <input
          type={kind.input}
          {...common}
          value={single}
          required={required}
          minlength={numberOrUndefined(schema.minLength)}
          maxlength={numberOrUndefined(schema.maxLength)}
          step={kind.input === 'datetime-local' ? '1' : undefined}
          autocomplete="off"
        />
      );
    case 'multiline':
    case 'json':
      return textArea();
    case 'number':
      return (
        <input
          type="number"
          {...common}
          value={single}
          required={required}
          min={numberOrUndefined(schema.minimum)}
          max={numberOrUndefined(schema.maximum)}
          step={kind.integer ? '1' : 'any'}
          inputmode={kind.integer ? 'numeric' : 'decimal'}
        />
      );
    case 'choice':
      return (
        <select {...common} required={required}>
          {(!required || single === '') && <option value="">{required ? 'Choose…' : '(none)'}</option>}
          {kind.choices.map((choice) => (
            <option value={choice.text} selected={choice.text === single}>
              {choice.label}
            </option>
          ))}
        </select>
      );
    case 'boolean':
      return <input type="checkbox" {...common} value="true" checked={list.includes('true')} />;
    case 'choices':
      return (
        <>
          {kind.choices.map((choice, index) => (
            <div class="check">
              <input
                type="checkbox"
                id={`${id}-${index}`}
                name={common.name}
                value={choice.text}
                checked={list.includes(choice.text)}
                aria-invalid={common['aria-invalid']}
              />
              <label for={`${id}-${index}`}>{choice.label}</label>
            </div>
          ))}
        </>
      );
  }
}

interface InputProps {
  field: FormField;
  id: string;
  text: string | string[];
  invalid: boolean;
  described: string | undefined;
}

const HINTS: Partial<Record<string, string>> = {
  'datetime-local': 'A date and time in UTC.',
  json: 'As JSON.',
};

function Field({
  field,
  id,
  text,
  problem,
}: {
  field: FormField;
  id: string;
  text: string | string[];
  problem?: string;
}) {
  const extra = HINTS[field.kind.kind === 'text' ? field.kind.input : field.kind.kind];
  const hint = [field.hint, extra].filter(Boolean).join(' ');
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = problem ? `${id}-error` : undefined;
  const described = describedBy(hintId, errorId);
  const optional = mayBeEmpty(field) && field.kind.kind !== 'boolean' && <span class="hint"> (optional)</span>;
  const notes: Child = (
    <>
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
      {problem && (
        <p class="field-error" id={errorId}>
          {problem}
        </p>
      )}
    </>
  );
  const input = <Input field={field} id={id} text={text} invalid={problem !== undefined} described={described} />;
  if (field.kind.kind === 'choices') {
    return (
      <fieldset class={problem ? 'field choices invalid' : 'field choices'} aria-describedby={described}>
        <legend>
          {field.label}
          {optional}
        </legend>
        {input}
        {notes}
      </fieldset>
    );
  }
  if (field.kind.kind === 'boolean') {
    return (
      <div class={problem ? 'field invalid' : 'field'}>
        <div class="check">
          {input}
          <label for={id}>{field.label}</label>
        </div>
        {notes}
      </div>
    );
  }
  return (
    <div class={problem ? 'field invalid' : 'field'}>
      <label for={id}>
        {field.label}
        {optional}
      </label>
      {notes}
      {input}
    </div>
  );
}

/**
 * The form's inputs, to be placed inside the answer's <form>: prefilled with
 * the proposed values, or with what was sent when the answer was refused.
 */
export function FormInputs({ form, idSuffix, refused }: { form: Form; idSuffix?: string; refused?: Refused }) {
  const fields = formFields(form.schema);
  const sent = refused?.fields;
  return (
    <section class="form-fields" aria-label="The form">
      <input type="hidden" name={FORM_DRAWN.name} value={FORM_DRAWN.value} />
      {fields.map((field, index) => (
        <Field
          field={field}
          id={fieldId(index, idSuffix)}
          text={
            sent
              ? (own(sent, field.name) ?? (field.kind.kind === 'boolean' || field.kind.kind === 'choices' ? [] : ''))
              : fieldText(field, own(form.values, field.name))
          }
          problem={refused ? problemOf(refused.problems, field.name) : undefined}
        />
      ))}
      <p class="hint">{`Answering ${form.on.join(' or ')} sends these values.`}</p>
    </section>
  );
}

/**
 * What stopped the answer, at the top of its form: each problem, linked to
 * its field where it has one (`text` is the comment box).
 */
export function ProblemSummary({
  form,
  refused,
  idSuffix,
  noun,
}: {
  form: Form | null;
  refused: Refused;
  idSuffix?: string;
  noun: string;
}) {
  const fields = form ? formFields(form.schema) : [];
  const targetOf = (problem: FieldProblem): { href?: string; label: string } => {
    if (problem.field === 'text') return { href: `#${textId(idSuffix)}`, label: 'Comment' };
    const index = fields.findIndex(
      (f) => problem.field === `${FIELD_PREFIX}${f.name}` || problem.field.startsWith(`${FIELD_PREFIX}${f.name}.`),
    );
    if (index === -1) return { label: problem.field };
    const field = fields[index] as FormField;
    const rest = problem.field.slice(FIELD_PREFIX.length + field.name.length + 1);
    return { href: `#${fieldId(index, idSuffix)}`, label: rest ? `${field.label} (${rest})` : field.label };
  };
  return (
    <div class="notice error summary" role="alert">
      <p>
        Your {noun} was not recorded: {refused.problems.length === 1 ? 'one thing needs' : 'these need'} your attention.
      </p>
      <ul>
        {refused.problems.map((problem) => {
          const { href, label } = targetOf(problem);
          return (
            <li>
              {href ? <a href={href}>{label}</a> : <strong>{label}</strong>} {problem.problem}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
