import { Fragment, jsx, raw } from '@pausepoint/jsx';
import { describe, expect, it } from 'vitest';
import { documentOf } from '../../src/html.js';

// The JSX runtime every page and email is made with (jsx/): what it escapes,
// what it leaves out, and what it refuses.

describe('the JSX runtime', () => {
  it('escapes text and attribute values from outside, so they cannot end an element or an attribute', () => {
    const hostile = `"><script>alert('x')</script>&`;
    const html = (
      <a href={hostile} title={hostile}>
        {hostile}
      </a>
    ).html;
    expect(html).toBe(
      '<a href="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"' +
        ' title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">' +
        '&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</a>',
    );
    expect(html).not.toContain('<script>');
  });

  it('places rendered HTML as it is, and raw() only where it is asked for', () => {
    const inner = <b>bold</b>;
    expect((<p>{inner}</p>).html).toBe('<p><b>bold</b></p>');
    expect((<p>{raw('<br/>')}</p>).html).toBe('<p><br/></p>');
    expect((<p>{'<br/>'}</p>).html).toBe('<p>&lt;br/&gt;</p>');
  });

  it('leaves out null, undefined and booleans among children, writes numbers, and flattens arrays', () => {
    const items = ['a', 'b'];
    const html = (
      <ul>
        {null}
        {undefined}
        {false}
        {true}
        {0}
        {items.map((item) => (
          <li>{item}</li>
        ))}
      </ul>
    ).html;
    expect(html).toBe('<ul>0<li>a</li><li>b</li></ul>');
  });

  it('writes a boolean attribute bare when true and leaves it out when false; other attributes say true or false', () => {
    expect((<input type="checkbox" checked={true} disabled={false} />).html).toBe(
      '<input type="checkbox" checked=""/>',
    );
    expect((<button type="button" disabled={false} aria-pressed={false} />).html).toBe(
      '<button type="button" aria-pressed="false"></button>',
    );
    expect((<option value="a" selected={undefined} label={null} />).html).toBe('<option value="a"></option>');
  });

  it('closes void elements itself and renames the React spellings of class and for', () => {
    expect((<br />).html).toBe('<br/>');
    expect((<meta charset="utf-8" />).html).toBe('<meta charset="utf-8"/>');
    expect(
      (
        <label className="x" htmlFor="y">
          Name
        </label>
      ).html,
    ).toBe('<label class="x" for="y">Name</label>');
  });

  it('calls components with their props and children, and joins a fragment', () => {
    const Greeting = ({ name, children }: { name: string; children?: unknown }) => (
      <p>
        Hello {name}
        {children as string}
      </p>
    );
    expect(
      (
        <>
          <Greeting name="<Ann>">!</Greeting>
          <Greeting name="Bo" />
        </>
      ).html,
    ).toBe('<p>Hello &lt;Ann&gt;!</p><p>Hello Bo</p>');
    expect(Fragment({ children: ['a', <i>b</i>] }).html).toBe('a<i>b</i>');
  });

  it('refuses an attribute name or tag that could break out of the tag, and a function or object as a value', () => {
    expect(() => jsx('a', { 'x"><script': '1' })).toThrow(/invalid name/);
    expect(() => jsx('a onclick=x', {})).toThrow(/Invalid tag name/);
    expect(() => jsx('button', { onclick: () => 1 })).toThrow(/must be a string/);
    expect(() => jsx('div', { style: { color: 'red' } })).toThrow(/must be a string/);
  });

  it('makes a document: the doctype, then the page', () => {
    expect(documentOf(<html lang="en" />)).toBe('<!doctype html><html lang="en"></html>');
  });
});
