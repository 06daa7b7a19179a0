// Every time a person reads, in one place: on the server a UTC time named
// "UTC" (pages, emails, Slack), time left until a deadline in words (the
// response page and its script, the CLI's progress line), and the small
// browser script that the console, the inbox and the response page share to
// show each <time> in the reader's own zone, named.

/** "2026-11-27 21:57 UTC": a time as the server writes it, before any script localises it. */
export const formatUtc = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** "2 d 3 h", "1 h 5 min", "4 min 10 s", "9 s": time left until a deadline, in words. */
export function formatTimeLeft(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const [d, h, m, sec] = [Math.floor(s / 86400), Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60), s % 60];
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min ${sec} s`;
  return `${sec} s`;
}

/**
 * formatTimeLeft itself, for a page's own script: the response page's
 * countdown runs this very function's source, so the words the server writes
 * and the ones the script keeps current never differ.
 */
export const TIME_LEFT_JS = formatTimeLeft.toString();

/**
 * The browser's half, for a page's own script (inside its function): every
 * <time datetime> in the reader's zone with the zone named ("Nov 27, 2026,
 * 9:57 PM GMT+1"), the server's UTC text kept as its tooltip; one marked
 * data-relative says "in 3 hours" instead, with the local time as the
 * tooltip. Refreshed every 30 s. Without the script the UTC text stands.
 */
export const LOCAL_TIMES_JS = `
  var localTime, relativeTime;
  try {
    localTime = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric',
      hour: 'numeric', minute: '2-digit', timeZoneName: 'short' });
  } catch (e) {}
  try { relativeTime = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }); } catch (e) {}
  var timeUnits = [['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]];
  function ago(ms) {
    var s = Math.round(ms / 1000);
    for (var i = 0; i < timeUnits.length; i++) {
      if (Math.abs(s) >= timeUnits[i][1] || timeUnits[i][1] === 1)
        return relativeTime.format(Math.round(s / timeUnits[i][1]), timeUnits[i][0]);
    }
  }
  function localiseTimes() {
    document.querySelectorAll('time[datetime]').forEach(function (t) {
      var at = new Date(t.getAttribute('datetime'));
      if (isNaN(at.getTime()) || !localTime) return;
      if (!t.hasAttribute('data-utc')) t.setAttribute('data-utc', t.textContent);
      if (t.hasAttribute('data-relative') && relativeTime) {
        t.title = localTime.format(at);
        t.textContent = ago(at.getTime() - Date.now());
      } else {
        t.title = t.getAttribute('data-utc');
        t.textContent = localTime.format(at);
      }
    });
  }
  localiseTimes();
  setInterval(localiseTimes, 30000);
`;
