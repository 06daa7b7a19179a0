// The response page's own stylesheet and script, served from this origin
// (the CSP allows nothing else). The page works fully without the script,
// which only shows times in the reader's zone, keeps the "time left" line
// current (and the page honest once the deadline passes) and stops double
// submits.

import { LOCAL_TIMES_JS, TIME_LEFT_JS } from '../domain/time-format.js';

export const PAGE_CSS = `
:root { color-scheme: light dark; --fg: #1b1d21; --muted: #5d6470; --bg: #f6f7f9; --card: #fff; --line: #d9dde3;
  --accent: #1f5fd1; --accent-fg: #fff; --ok: #17663a; --warn: #8a4b00; --bad: #a1251b; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8eaed; --muted: #a3aab5; --bg: #14161a; --card: #1d2026;
  --line: #343943; --accent: #6d9eff; --accent-fg: #0b1020; --ok: #62c98b; --warn: #f0b35a; --bad: #ff8a80; } }
* { box-sizing: border-box; }
body { margin: 0; font: 17px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); }
main { max-width: 40rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 1.5rem; }
.eyebrow { margin: 0 0 .5rem; color: var(--muted); font-size: .85rem; letter-spacing: .04em; text-transform: uppercase; }
h1 { margin: 0 0 .75rem; font-size: 1.5rem; line-height: 1.25; overflow-wrap: anywhere; }
.details { margin: 0 0 1.25rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.time-left { margin: 0 0 1.25rem; color: var(--muted); font-size: .95rem; }
label { display: block; font-weight: 600; margin: 0 0 .35rem; }
textarea { width: 100%; min-height: 6rem; padding: .6rem .7rem; font: inherit; color: inherit; background: transparent;
  border: 1px solid var(--line); border-radius: 8px; resize: vertical; }
.hint { margin: .25rem 0 1rem; color: var(--muted); font-size: .85rem; }
.options { display: flex; flex-wrap: wrap; gap: .6rem; margin: 0; padding: 0; border: 0; }
.options legend { font-weight: 600; margin-bottom: .5rem; padding: 0; }
button, .button { flex: 1 1 10rem; min-height: 3rem; padding: .7rem 1rem; font: inherit; font-weight: 600; cursor: pointer;
  border-radius: 8px; border: 1px solid var(--accent); background: transparent; color: var(--accent); text-align: center;
  text-decoration: none; overflow-wrap: anywhere; }
button.primary, button.picked { background: var(--accent); color: var(--accent-fg); }
button.danger { border-color: var(--bad); color: var(--bad); }
button.danger.picked { background: var(--bad); color: var(--accent-fg); }
button:hover { filter: brightness(1.08); }
button:focus-visible, a:focus-visible, textarea:focus-visible, input:focus-visible, select:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
.form-fields { margin: 0 0 1.25rem; }
.field { margin: 0 0 1rem; padding: 0; border: 0; min-width: 0; }
.field > .hint { margin: 0 0 .35rem; }
.field legend { font-weight: 600; padding: 0; margin: 0 0 .35rem; }
.field input:not([type=checkbox]), .field select { display: block; width: 100%; min-height: 2.75rem; padding: .55rem .7rem;
  font: inherit; color: inherit; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
.field input[type=number] { max-width: 14rem; }
.field input[type=date], .field input[type=datetime-local] { max-width: 16rem; }
.field textarea.json { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 1rem;
  min-height: 8rem; }
.check { display: flex; align-items: center; gap: .6rem; margin: .25rem 0; }
.check input { width: 1.35rem; height: 1.35rem; margin: 0; flex: none; accent-color: var(--accent); }
.check label { margin: 0; font-weight: 400; }
.field > .check label { font-weight: 600; }
.field.invalid input:not([type=checkbox]), .field.invalid select, .field.invalid textarea { border-color: var(--bad);
  border-width: 2px; }
.field-error { margin: 0 0 .35rem; color: var(--bad); font-weight: 600; font-size: .95rem; }
.field-error::before { content: "⚠ "; }
.summary ul { margin: .35rem 0 0; padding-left: 1.25rem; }
.summary p { margin: 0; font-weight: 600; }
.summary a { color: inherit; }
button:disabled { opacity: .55; cursor: not-allowed; }
.notice { margin: 0 0 1rem; padding: .75rem 1rem; border-radius: 8px; border: 1px solid var(--line); }
.notice.ok { border-color: var(--ok); color: var(--ok); }
.notice.error { border-color: var(--bad); color: var(--bad); }
.state { font-size: 1.1rem; font-weight: 600; margin: 0 0 .5rem; }
.state.responded { color: var(--ok); } .state.timed_out { color: var(--warn); } .state.cancelled { color: var(--bad); }
.state.pending { color: var(--accent); }
.quorum { margin: 0 0 1.25rem; } .quorum p { margin: 0; } .quorum .rule { font-weight: 600; }
.quorum .progress { white-space: nowrap; }
.quorum .hint { margin-top: .25rem; }
.answer { margin: .25rem 0; }
.answer-text { white-space: pre-wrap; overflow-wrap: anywhere; border-left: 3px solid var(--line); padding-left: .75rem; }
time { white-space: nowrap; }
footer { margin-top: 1.5rem; color: var(--muted); font-size: .8rem; text-align: center; }
`;

export const PAGE_JS = `
(function () {
  // Times come in UTC from the server; show them in the reader's own zone, named.
${LOCAL_TIMES_JS}

  var el = document.querySelector('[data-expires-at]');
  if (el) {
    var expiresAt = Date.parse(el.getAttribute('data-expires-at'));
    var out = el.querySelector('[data-countdown]');
    var tick = function () {
      var left = expiresAt - Date.now();
      if (left <= 0) { expire(); return; }
      out.textContent = 'Time left: ' + formatTimeLeft(left);
      setTimeout(tick, left > 120000 ? 30000 : 1000);
    };
    tick();
  }
  // The deadline passed while the page was open: it says so, as a page
  // loaded now would, and takes no answer.
  function expire() {
    var eyebrow = document.querySelector('.eyebrow');
    if (eyebrow) eyebrow.textContent = 'No longer open';
    var time = el.querySelector('time');
    el.textContent = '';
    el.appendChild(document.createTextNode('Expired' + (time ? ' at ' : '.')));
    if (time) { el.appendChild(time); el.appendChild(document.createTextNode('.')); }
    document.querySelectorAll('[data-while-open]').forEach(function (e) { e.hidden = true; });
    var note = document.querySelector('[data-expired-note]');
    if (note) { note.hidden = false; note.textContent = 'This request has expired: no decision is needed any more.'; }
    document.querySelectorAll('form button, form textarea, form input, form select').forEach(function (b) { b.disabled = true; });
  }
  // The server's own function: the same words as the page it wrote.
  ${TIME_LEFT_JS}
  var form = document.querySelector('form[data-answer]');
  if (form) {
    var sent = false;
    form.addEventListener('submit', function (event) {
      if (sent) { event.preventDefault(); return; }
      sent = true;
      form.setAttribute('aria-busy', 'true');
    });
  }
})();
`;
