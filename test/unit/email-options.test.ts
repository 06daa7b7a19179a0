import { describe, expect, it } from 'vitest';
import { renderEmail } from '../../src/messages/render.js';

// The question's email: its option buttons look alike (none is the one to
// press) unless the developer styled one with options_style.

const question = {
  title: 'Drop the orders_2019 table?',
  body: null,
  options: ['drop', 'keep'],
  expiresAt: '2030-01-15T15:30:00.000Z',
  responseUrl: 'https://pp.example.com/r/token',
};
const buttonStyles = (html: string) =>
  Object.fromEntries([...html.matchAll(/<a href="[^"]*\?choice=([^"]+)" style="([^"]*)"/g)].map((m) => [m[1], m[2]]));

describe('the email’s option buttons', () => {
  it('look alike by default, the first one too', () => {
    const styles = buttonStyles(renderEmail(question).html);
    expect(Object.keys(styles)).toEqual(['drop', 'keep']);
    expect(styles.drop).toBe(styles.keep);
    expect(styles.drop).not.toContain('background');
  });

  it('show primary filled and danger red when the developer says so', () => {
    const styles = buttonStyles(renderEmail({ ...question, optionsStyle: { keep: 'primary', drop: 'danger' } }).html);
    expect(styles.keep).toContain('background:#1f5fd1');
    expect(styles.drop).toContain('color:#a1251b');
    expect(styles.drop).not.toContain('background');
  });

  it('look alike when an option is named after what every object inherits', () => {
    const styles = buttonStyles(
      renderEmail({ ...question, options: ['drop', 'toString', 'constructor'], optionsStyle: {} }).html,
    );
    expect(Object.keys(styles)).toEqual(['drop', 'toString', 'constructor']);
    expect(new Set(Object.values(styles)).size).toBe(1);
    expect(styles.toString).not.toContain('undefined');
  });
});
