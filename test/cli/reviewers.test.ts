import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../helpers/smtp.js';
import { type RunningCli, runCli, startCli } from './run-cli.js';

// `pausepoint ask --reviewer …` and `pausepoint pauses timeline` as a script
// runs them: a real process against a real service. Reviewers vote with the
// personal links the command prints in test mode.

vi.setConfig({ testTimeout: 60_000 });

let service: TestService;
let smtp: SmtpReceiver;
let dev: Account;
let env: Record<string, string>;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  service = await startTestService({ env: { SMTP_URL: smtp.url, EMAIL_FROM: 'approvals@example.com' } });
  dev = await registerAccount(service.url);
  env = { PAUSEPOINT_API_KEY: dev.test, PAUSEPOINT_BASE_URL: service.url };
});
afterAll(async () => {
  await service?.destroy();
  await smtp?.close();
});

/** The personal links `ask` prints on stderr for each reviewer, by email, once it has printed them all. */
async function linksOf(cli: RunningCli, count: number): Promise<Map<string, string>> {
  await cli.waitFor(/Test mode: nobody is emailed/, 'stderr');
  const links = new Map<string, string>();
  for (const [, email, url] of cli.stderr.matchAll(/^ {2}(?:.*<)?([^\s<>]+@[^\s<>]+?)>?\s+(http\S+\/r\/\S+)$/gm)) {
    links.set(email!, url!);
  }
  expect(links.size).toBe(count);
  return links;
}

async function vote(url: string, choice: string, text?: string) {
  const reply = await call(service.url, 'POST', `/v1/respond/${tokenOf({ response_url: url })}`, {
    body: text === undefined ? { choice } : { choice, text },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

describe('ask --reviewer', () => {
  it('names who must answer, waits for the quorum, and prints who decided and the votes', async () => {
    const cli = startCli(
      [
        'ask',
        'Drop the old table?',
        '--reviewer',
        'ana@example.com',
        '--reviewer',
        'Bo Berg <bo@example.com>',
        '--quorum',
        '2',
        '--veto',
        'reject',
        '--allow-text',
      ],
      env,
    );
    const links = await linksOf(cli, 2);
    expect(cli.stderr).toMatch(/^Reviewers \(2 of 2 must agree; one vote for reject decides\):$/m);
    expect(cli.stderr).not.toMatch(/Answer at/);
    const first = await vote(links.get('ana@example.com')!, 'approve', 'fine by me');
    expect(first.status).toBe('pending');
    await vote(links.get('bo@example.com')!, 'approve');
    const done = await cli.exited;
    expect(done.code).toBe(0);
    const lines = done.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('Answered: approve, decided by Bo Berg <bo@example.com>');
    expect(lines[1]).toBe('Votes:');
    expect(lines[2]).toMatch(/^ {2}ana@example\.com {2}approve {2}\S+ {2}"fine by me"$/);
    expect(lines[3]).toMatch(/^ {2}bo@example\.com {3}approve {2}\S+$/);
    expect(lines).toHaveLength(4);
  });

  it('exits 1 on a veto, and prints the outcome with its votes as JSON', async () => {
    const cli = startCli(
      [
        'ask',
        'Rotate the keys?',
        '--json',
        '-r',
        'ana@example.com',
        '-r',
        'bo@example.com',
        '--quorum',
        '2',
        '--veto',
        'reject',
      ],
      env,
    );
    const links = await linksOf(cli, 2);
    await vote(links.get('bo@example.com')!, 'reject');
    const done = await cli.exited;
    expect(done.code).toBe(1);
    const output = JSON.parse(done.stdout);
    expect(output).toMatchObject({
      status: 'responded',
      choice: 'reject',
      responded_by: { email: 'bo@example.com', name: null },
      votes: [{ email: 'bo@example.com', choice: 'reject', text: null }],
      exit_code: 1,
      pause: { response_url: null, quorum: 2, veto: ['reject'] },
    });
  });

  it('shows the votes cast before a timeout', async () => {
    const cli = startCli(
      [
        'ask',
        'Agreed?',
        '-r',
        'ana@example.com',
        '-r',
        'bo@example.com',
        '--quorum',
        '2',
        '--timeout',
        '3s',
        '--default',
        'reject',
      ],
      env,
    );
    const links = await linksOf(cli, 2);
    await vote(links.get('ana@example.com')!, 'approve');
    const done = await cli.exited;
    expect(done.code).toBe(1);
    expect(done.stdout).toMatch(
      /^Timed out: reject \(the default\)\nVotes:\n {2}ana@example\.com {2}approve {2}\S+\n$/,
    );
  });

  it('passes reminders and escalation on, and --no-wait prints each reviewer’s link', async () => {
    const args = [
      'ask',
      'Later?',
      '--no-wait',
      '--reviewer',
      'Ana <ana@example.com>',
      '--remind-every',
      '10m',
      '--remind-max',
      '2',
      '--escalate-after',
      '1h',
      '--escalate-to',
      'The CTO <cto@example.com>',
    ];
    const [text, json] = await Promise.all([runCli(args, env), runCli([...args, '--json'], env)]);
    expect(json.code).toBe(0);
    const pause = JSON.parse(json.stdout);
    expect(pause).toMatchObject({
      status: 'pending',
      response_url: null,
      reviewers: [{ email: 'ana@example.com', name: 'Ana', added_by: 'create' }],
      quorum: 1,
      remind_every: 600,
      remind_max: 2,
      escalate: { after: 3600, reviewers: [{ email: 'cto@example.com', name: 'The CTO' }], escalated_at: null },
    });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^pause_\w+\nana@example\.com http\S+\/r\/pause_\w+\.rvw_\w+\.\S+\n$/);
  });

  it('with a live key prints no personal link: each reviewer votes from their email', async () => {
    const live = { ...env, PAUSEPOINT_API_KEY: dev.live };
    const cli = startCli(['ask', 'Live question?', '-r', 'Ana <ana@example.com>', '-r', 'bo@example.com'], live);
    await cli.waitFor(/Each reviewer is emailed their own link\./, 'stderr');
    expect(cli.stderr).toMatch(/^Reviewers \(1 of 2 must agree\):\n {2}Ana <ana@example\.com>\n {2}bo@example\.com\n/m);
    expect(cli.stderr).not.toMatch(/\/r\//);
    const mails = await smtp.waitForMails(2);
    const mail = mails.find((m) => m.to.includes('bo@example.com'))!;
    const link = (mail.parsed.text ?? '').match(/- reject: (\S+)/)?.[1] ?? '';
    await vote(link, 'reject');
    const done = await cli.exited;
    expect(done.code).toBe(1);
    expect(done.stdout).toMatch(
      /^Answered: reject, decided by bo@example\.com\nVotes:\n {2}bo@example\.com {2}reject {2}\S+\n$/,
    );
    // --no-wait names the reviewers, one a line, without their links.
    const noWait = await runCli(
      ['ask', 'Live, later?', '--no-wait', '-r', 'ana@example.com', '-r', 'bo@example.com'],
      live,
    );
    expect(noWait.stdout).toMatch(/^pause_\w+\nana@example\.com\nbo@example\.com\n$/);
  });

  it('is in the help', async () => {
    const [general, ask, pauses] = await Promise.all([
      runCli(['--help']),
      runCli(['ask', '--help']),
      runCli(['pauses', '--help']),
    ]);
    expect(general.stdout).toMatch(/--reviewer EMAIL/);
    expect(general.stdout).toMatch(/pauses list\|get\|cancel\|timeline/);
    expect(ask.stdout).toMatch(
      /--reviewer, -r EMAIL[\s\S]*--quorum N[\s\S]*--veto OPTION[\s\S]*--remind-every DURATION[\s\S]*--remind-max N[\s\S]*--escalate-after DURATION[\s\S]*--escalate-to EMAIL/,
    );
    expect(pauses.stdout).toMatch(/pausepoint pauses timeline PAUSE_ID/);
  });

  it('says what is wrong with the reviewer flags', async () => {
    const [tooMany, withNotify] = await Promise.all([
      runCli(['ask', 'Q?', '--reviewer', 'ana@example.com', '--quorum', '2'], env),
      runCli(['ask', 'Q?', '--reviewer', 'ana@example.com', '--notify', 'ops@example.com'], env),
    ]);
    // The service's rule: the quorum cannot exceed the reviewers.
    expect(tooMany.code).toBe(3);
    expect(tooMany.stderr).toMatch(/HTTP 400/);
    expect(withNotify.code).toBe(3);
    expect(withNotify.stderr).toMatch(/--notify and --notify-slack do not go with --reviewer/);
  });
});

describe('pauses get and pauses timeline', () => {
  it('shows the reviewers and their votes, and the timeline as text and JSON', async () => {
    const created = await runCli(
      [
        'ask',
        'Audit me?',
        '--no-wait',
        '--json',
        '--allow-text',
        '-r',
        'ana@example.com',
        '-r',
        'bo@example.com',
        '--quorum',
        '2',
      ],
      env,
    );
    const pause = JSON.parse(created.stdout);
    const [ana, bo] = pause.reviewers as { email: string; response_url: string }[];
    await vote(ana!.response_url, 'approve', 'ok');
    await vote(bo!.response_url, 'approve');

    const [get, timeline, timelineJson] = await Promise.all([
      runCli(['pauses', 'get', pause.id], env),
      runCli(['pauses', 'timeline', pause.id], env),
      runCli(['pauses', 'timeline', pause.id, '--json'], env),
    ]);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(/^decided by: +bo@example\.com$/m);
    expect(get.stdout).toMatch(/^quorum: +2 of 2$/m);
    expect(get.stdout).toMatch(/^reviewer: +ana@example\.com: approve "ok" at \S+$/m);
    expect(get.stdout).toMatch(/^reviewer: +bo@example\.com: approve at \S+$/m);
    expect(get.stdout).not.toMatch(/^link:/m);

    expect(timelineJson.code).toBe(0);
    const entries = JSON.parse(timelineJson.stdout) as { at: string; type: string; actor: { type: string } }[];
    expect(entries[0]).toMatchObject({ type: 'created', actor: { type: 'developer' } });
    expect(entries.at(-1)).toMatchObject({ type: 'responded' });

    expect(timeline.code).toBe(0);
    const lines = timeline.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^AT\s+WHAT\s+BY\s+DETAIL$/);
    expect(lines).toHaveLength(entries.length + 1);
    expect(lines[1]).toMatch(new RegExp(`^${entries[0]!.at}\\s+created\\s+developer`));
    expect(timeline.stdout).toMatch(/^\S+\s+voted\s+reviewer ana@example\.com\s+.*approve/m);
    expect(timeline.stdout).toMatch(/^\S+\s+responded\s+reviewer bo@example\.com\b/m);

    const [missing, noId] = await Promise.all([
      runCli(['pauses', 'timeline', 'pause_nope'], env),
      runCli(['pauses', 'timeline'], env),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not_found, HTTP 404/);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toMatch(/pauses timeline needs a pause id/);
  });
});
