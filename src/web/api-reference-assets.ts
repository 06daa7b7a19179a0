// The API reference page's own stylesheet and bootstrap script, served from
// this origin: the page's policy allows no inline script. The bootstrap hands
// Redoc the document's address, the answer's style nonce and pausepoint's look.

export const API_REFERENCE_CSS = `
body { margin: 0; }
.noscript { max-width: 40rem; margin: 2rem auto; padding: 0 1rem; font: 17px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
`;

export const API_REFERENCE_JS = `
(function () {
  var root = document.getElementById('api-reference');
  var text = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  var code = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
  Redoc.init(
    root.getAttribute('data-spec-url'),
    {
      nonce: root.getAttribute('data-nonce'),
      expandResponses: '200,201',
      requiredPropsFirst: true,
      jsonSampleExpandLevel: 3,
      theme: {
        colors: { primary: { main: '#1f5fd1' }, text: { primary: '#1b1d21', secondary: '#5d6470' } },
        typography: {
          fontFamily: text,
          fontSize: '15px',
          lineHeight: '1.6',
          headings: { fontFamily: text, fontWeight: '600' },
          code: { fontFamily: code, color: '#1b1d21', backgroundColor: '#eef0f3' },
          links: { color: '#1f5fd1' },
        },
        sidebar: { backgroundColor: '#f6f7f9', textColor: '#1b1d21', activeTextColor: '#1f5fd1' },
        rightPanel: { backgroundColor: '#1b1d21' },
      },
    },
    root,
  );
})();
`;
