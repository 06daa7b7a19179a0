// The console's own stylesheet and script, served from this origin (the CSP
// allows nothing else). The same family as the response page (web/assets.ts):
// its colours, type and cards. Every page works without the script, which
// only adds copy buttons and shows times relative to now in the reader's zone.

import { LOCAL_TIMES_JS } from '../domain/time-format.js';
import { FRAME_CSS } from '../web/layout.js';

export const CONSOLE_CSS = `
:root { color-scheme: light dark; --fg: #1b1d21; --muted: #5d6470; --bg: #f6f7f9; --card: #fff; --line: #d9dde3;
  --accent: #1f5fd1; --accent-fg: #fff; --ok: #17663a; --warn: #8a4b00; --bad: #a1251b; --soft: #eef2f8; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8eaed; --muted: #a3aab5; --bg: #14161a; --card: #1d2026;
  --line: #343943; --accent: #6d9eff; --accent-fg: #0b1020; --ok: #62c98b; --warn: #f0b35a; --bad: #ff8a80;
  --soft: #232833; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); }
a { color: var(--accent); }
${FRAME_CSS}
main { max-width: 64rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
main.narrow { max-width: 26rem; }
h1 { margin: 0 0 1rem; font-size: 1.5rem; line-height: 1.25; overflow-wrap: anywhere; }
h2 { margin: 0 0 .75rem; font-size: 1.1rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 1.25rem;
  margin: 0 0 1.25rem; }
.muted { color: var(--muted); }
.eyebrow { margin: 0 0 .35rem; color: var(--muted); font-size: .8rem; letter-spacing: .04em; text-transform: uppercase; }
label { display: block; font-weight: 600; margin: 0 0 .3rem; }
input, select { font: inherit; color: inherit; background: var(--card); border: 1px solid var(--line);
  border-radius: 8px; padding: .55rem .65rem; min-height: 2.75rem; }
.field { margin: 0 0 1rem; } .field input { width: 100%; }
.hint { margin: .25rem 0 0; color: var(--muted); font-size: .85rem; }
button, .button { display: inline-block; min-height: 2.75rem; padding: .55rem 1rem; font: inherit; font-weight: 600;
  cursor: pointer; border-radius: 8px; border: 1px solid var(--accent); background: transparent; color: var(--accent);
  text-align: center; text-decoration: none; }
button.primary, .button.primary { background: var(--accent); color: var(--accent-fg); }
button.danger, .button.danger { border-color: var(--bad); color: var(--bad); }
button.danger.primary { background: var(--bad); color: var(--card); }
button.link { border: 0; min-height: 0; padding: 0; color: var(--accent); text-decoration: underline; font-weight: 400; }
button.small { min-height: 2rem; padding: .2rem .6rem; font-size: .85rem; white-space: nowrap; }
button:hover, .button:hover { filter: brightness(1.08); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.wide { width: 100%; }
.notice { margin: 0 0 1rem; padding: .75rem 1rem; border-radius: 8px; border: 1px solid var(--line);
  background: var(--card); }
.notice.ok { border-color: var(--ok); color: var(--ok); }
.notice.error { border-color: var(--bad); color: var(--bad); }
.toolbar { display: flex; flex-wrap: wrap; align-items: end; gap: .75rem 1.25rem; margin: 0 0 1rem; }
.toolbar form { display: flex; flex-wrap: wrap; align-items: end; gap: .5rem; margin: 0; max-width: 100%; }
.toolbar input[type=search] { width: 14rem; max-width: 100%; }
.switch { display: inline-flex; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.switch a { padding: .5rem .9rem; text-decoration: none; color: var(--muted); font-weight: 600; }
.switch a[aria-current="page"] { background: var(--accent); color: var(--accent-fg); }
.count { font-weight: 600; margin: 0; align-self: center; }
.count strong { font-size: 1.25rem; color: var(--accent); }
table { width: 100%; border-collapse: collapse; }
caption { text-align: left; padding: 0 .5rem .5rem; font-size: .85rem; }
th, td { text-align: left; padding: .6rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; font-weight: 600; }
td.title a { font-weight: 600; text-decoration: none; overflow-wrap: anywhere; }
td.title a.parts { overflow-wrap: break-word; }
td.title a:hover { text-decoration: underline; }
.status { display: inline-block; font-size: .8rem; font-weight: 600; padding: .1rem .5rem; border-radius: 999px;
  border: 1px solid currentColor; white-space: nowrap; }
.status.pending { color: var(--accent); } .status.responded { color: var(--ok); }
.status.timed_out { color: var(--warn); } .status.cancelled { color: var(--bad); }
.pager { display: flex; gap: 1rem; justify-content: space-between; margin-top: 1rem; }
.empty { text-align: center; padding: 2rem 1rem; color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.body { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0 0 1rem; }
.label { margin: 0 0 .25rem; color: var(--muted); font-size: .85rem; font-weight: 600; overflow-wrap: anywhere; }
.form-values { margin: .35rem 0 0; }
.form-values dl.values { display: block; font-size: .95rem; }
.form-values dl.values dt { color: var(--muted); margin-top: .35rem; }
.form-values dl.values dd { overflow-wrap: anywhere; }
table.reviewers td { overflow-wrap: anywhere; }
.form-values dd.changed { border-left: 3px solid var(--warn); padding-left: .5rem; }
.form-values .mark { color: var(--warn); }
.form-values code { white-space: pre-wrap; overflow-wrap: anywhere; }
.copy { display: flex; gap: .5rem; align-items: center; margin: 0 0 .5rem; }
.copy code { flex: 1; overflow-wrap: anywhere; background: var(--soft); padding: .35rem .5rem; border-radius: 6px;
  font-size: .85rem; }
.copy code.short { min-width: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
ol.timeline { list-style: none; margin: 0; padding: 0; border-left: 2px solid var(--line); }
ol.timeline li { position: relative; padding: 0 0 .9rem 1rem; }
ol.timeline li::before { content: ""; position: absolute; left: -7px; top: .45rem; width: 12px; height: 12px;
  border-radius: 50%; background: var(--card); border: 2px solid var(--accent); }
ol.timeline .what { font-weight: 600; } ol.timeline .detail { color: var(--muted); font-size: .9rem; overflow-wrap: anywhere; }
.grid { display: grid; gap: 0 1.25rem; } .grid > * { min-width: 0; }
@media (min-width: 52rem) { .grid { grid-template-columns: 3fr 2fr; } }
.keys code { font-size: .85rem; }
.warning { color: var(--warn); font-weight: 600; }
meter { display: block; width: 100%; height: 1.5rem; margin: .25rem 0; }
.quota { margin: 0; } .quota strong { font-size: 1.25rem; color: var(--accent); }
td.event { overflow-wrap: anywhere; }
time { white-space: nowrap; }
.status.succeeded { color: var(--ok); } .status.failed { color: var(--bad); }
.status.sent { color: var(--ok); } .status.suppressed { color: var(--muted); }
ol.timeline li.failed::before { border-color: var(--bad); background: var(--bad); }
ul.notifications { margin: 0; padding: 0; list-style: none; } ul.notifications > li { margin: 0 0 .75rem; overflow-wrap: anywhere; }
ul.notifications form { margin: .35rem 0 0; } .error-text { color: var(--bad); font-size: .9rem; }
pre.preview { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); padding: .5rem; border-radius: 6px;
  font-size: .85rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.url, td.result { overflow-wrap: anywhere; }
fieldset { border: 0; padding: 0; } legend { font-weight: 600; padding: 0; margin: 0 0 .3rem; }
.check { display: flex; align-items: center; gap: .5rem; } .check label { margin: 0; font-weight: 400; }
.check input { min-height: 0; width: 1.25rem; height: 1.25rem; }
.secret { border-color: var(--ok); }
td form { margin: 0; }
form.inline { display: inline-block; margin: 0 .5rem .5rem 0; }
pre.answer { margin: 0; max-height: 12rem; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; font-size: .85rem; }
.toolbar form { flex-wrap: wrap; }
@media (max-width: 40rem) {
  table.pauses thead { position: absolute; left: -999px; }
  table.pauses tr { display: grid; grid-template-columns: 1fr auto; padding: .5rem 0; border-bottom: 1px solid var(--line); }
  table.pauses td { border: 0; padding: .15rem 0; }
  table.pauses td.title { grid-column: 1 / -1; }
  table.stack thead { position: absolute; left: -999px; }
  table.stack tr { display: block; padding: .5rem 0; border-bottom: 1px solid var(--line); }
  table.stack td { display: block; border: 0; padding: .15rem 0; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .85rem; }
  table.keys thead, table.history thead { position: absolute; left: -999px; }
  table.keys tr, table.history tr { display: grid; grid-template-columns: auto 1fr; gap: 0 .75rem; padding: .5rem 0;
    border-bottom: 1px solid var(--line); }
  table.keys td, table.keys th, table.history td { border: 0; padding: .15rem 0; }
  table.keys td:last-child, table.history td.event { grid-column: 1 / -1; }
}
`;

export const CONSOLE_JS = `
(function () {
  // Times come in UTC from the server: shown relative to now, with the
  // date in the reader's own zone as a tooltip.
${LOCAL_TIMES_JS}

  // Counts that change while the page is open (the pending pauses): read
  // again every 15 s while the page is shown, and when it comes back to view.
  document.querySelectorAll('[data-live-count]').forEach(function (el) {
    var url = el.getAttribute('data-live-count');
    var number = el.querySelector('strong');
    function update() {
      if (document.hidden || !number) return;
      fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) {
          if (body && typeof body.pending === 'number' && number.textContent !== String(body.pending))
            number.textContent = String(body.pending);
        })
        .catch(function () {});
    }
    setInterval(update, 15000);
    document.addEventListener('visibilitychange', update);
    window.addEventListener('focus', update);
  });

  // Copy buttons: added only where the clipboard can be written.
  if (navigator.clipboard) {
    document.querySelectorAll('[data-copy]').forEach(function (el) {
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'small';
      var label = el.getAttribute('data-copy-label');
      // The accessible name holds the visible word, "Copy" or "Copied".
      function show(word) {
        button.textContent = word;
        if (label) button.setAttribute('aria-label', word + ' ' + label);
      }
      show('Copy');
      button.addEventListener('click', function () {
        navigator.clipboard.writeText(el.textContent).then(function () {
          show('Copied');
          setTimeout(function () { show('Copy'); }, 1500);
        });
      });
      el.parentNode.insertBefore(button, el.nextSibling);
    });
  }
})();
`;
