import type { Form, JsonObject } from '../domain/form.js';
import { sameValues } from '../domain/form.js';
import { formFields, own } from '../domain/form-fields.js';

// An answer's form values beside the proposed ones, for the console's pause
// page (the outcome and each reviewer's vote): every field by its title, the
// changed ones marked in words and not by colour alone.

const shown = (value: unknown) =>
  value === undefined ? (
    <span class="muted">(none)</span>
  ) : typeof value === 'string' ? (
    value
  ) : (
    <code>{JSON.stringify(value)}</code>
  );

/** The fields of the schema in order, then any other field the values hold. */
function namesOf(form: Form, values: JsonObject): { name: string; label: string }[] {
  const fields = formFields(form.schema).map(({ name, label }) => ({ name, label }));
  const others = Object.keys(values)
    .filter((name) => !fields.some((field) => field.name === name))
    .map((name) => ({ name, label: name }));
  return [...fields, ...others];
}

export function FormValues({ form, values, label }: { form: Form; values: JsonObject; label: string }) {
  const proposed = form.values;
  const rows = namesOf(form, values).filter(
    ({ name }) => Object.hasOwn(values, name) || (proposed !== null && Object.hasOwn(proposed, name)),
  );
  const changed = (name: string) => {
    if (proposed === null) return false;
    const [answered, was] = [Object.hasOwn(values, name), Object.hasOwn(proposed, name)];
    return answered !== was || (answered && !sameValues(values[name], proposed[name]));
  };
  const count = rows.filter(({ name }) => changed(name)).length;
  return (
    <div class="form-values">
      <p class="label">
        {label}
        {proposed === null ? ' (none were proposed)' : count === 0 ? ' (as proposed)' : ` (${count} changed)`}
      </p>
      <dl class="facts values">
        {rows.map(({ name, label: fieldLabel }) => (
          <>
            <dt>{fieldLabel}</dt>
            <dd class={changed(name) ? 'changed' : undefined}>
              {shown(own(values, name))}
              {changed(name) && proposed !== null && (
                <span class="was">
                  {' '}
                  <strong class="mark">changed</strong>, proposed {shown(own(proposed, name))}
                </span>
              )}
            </dd>
          </>
        ))}
      </dl>
    </div>
  );
}
