import { describe, expect, it } from 'vitest';
import { FormValues } from '../../src/console/form-values.js';
import type { Form } from '../../src/domain/form.js';

// The values of an answer as the console shows them beside those proposed.

const form: Form = {
  schema: {
    type: 'object',
    properties: { toString: { type: 'string' }, amount: { type: 'number' } },
  },
  values: { toString: 'proposed text', amount: 5 },
  on: ['approve'],
};

describe('the values of an answer', () => {
  it('shows a field the answer left out as none, even one named after what every object inherits', () => {
    const html = (<FormValues form={form} values={{ amount: 5 }} label="Values" />).html;
    expect(html).toContain('<span class="muted">(none)</span>');
    expect(html).toContain('proposed proposed text');
    expect(html).toContain('(1 changed)');
  });
});
