// pausepoint ask "Deploy v2 to prod?" --option approve --option reject --timeout 30m --default reject
// pausepoint ask "Drop the old table?" --reviewer ana@example.com --reviewer bo@example.com --quorum 2 --veto reject
// pausepoint ask "Refund order 1234?" --form refund.schema.json --values proposed.json | jq .amount
//
// Asks, waits, prints the outcome and exits with it, so that
// `pausepoint ask … && ./deploy.sh` gates a deploy. With --form, stdout is the
// answer's values as JSON (null when none were submitted), for jq, and the
// outcome line goes to stderr. The exit code:
//   0  the first option was chosen (by a person, or as the timeout default)
//   1  any other option, or the pause was cancelled
//   2  it timed out with no default
//   3  an error (bad flags, no key, the service refused or could not be reached)
//   130 interrupted (Ctrl-C): the pause is cancelled first
import { type CreatePauseParams, type Outcome, outcomeOf, type Pause, type Vote } from '@pausepoint/sdk';
import {
  clientFrom,
  err,
  GLOBAL_HELP,
  out,
  parse,
  printJson,
  reportError,
  UsageError,
  withInterrupt,
} from './common.js';
import { formatDuration, parseDuration } from './duration.js';
import { readJsonFile } from './json-files.js';
import { positiveInteger } from './pauses.js';
import { Progress } from './progress.js';
import { parseReviewer, reviewerLabel } from './reviewers.js';

export const EXIT = { first: 0, other: 1, timeout: 2, error: 3, interrupted: 130 } as const;

export const ASK_HELP = `Usage: pausepoint ask QUESTION [flags]

Asks a person, waits for the answer, prints it and exits with it:
  0 the first option was chosen (or was the timeout default), 1 any other
  option or a cancel, 2 timed out with no default, 3 an error,
  130 interrupted (Ctrl-C): the pause is cancelled.
  pausepoint ask "Deploy v2 to prod?" --timeout 30m --default reject && ./deploy.sh

Flags:
  --option, -o TEXT      an option; repeat for each (default: approve, reject)
  --timeout DURATION     how long to wait: 90s, 30m, 2h, 1d (default: 24h)
  --default OPTION       the outcome if nobody answers in time
  --body TEXT            details shown under the question
  --allow-text           offer a comment box
  --require-text OPTION  choosing this option needs a written reason; repeatable
  --notify EMAIL         email someone the question; repeat for several
  --notify-slack URL     post the question to a Slack incoming webhook
  --metadata KEY=VALUE   your own data, echoed in webhooks; repeatable
  --idempotency-key KEY  make a retried ask reuse the same pause
  --no-wait              create the pause, print it and exit 0 without waiting
  --quiet, -q            do not print the response link (or reviewers) on stderr

Forms: the person fills in fields (and may change the values proposed); stdout
is then the answer's values as JSON, or null when the choice submits none, and
the outcome line goes to stderr. The exit code is as above.
  pausepoint ask "Refund order 1234?" --form refund.json --values proposed.json | jq .amount
  --form FILE            a JSON Schema (type "object") of the fields; - reads stdin
  --values FILE          the proposed values, shown prefilled; - reads stdin
  --form-on OPTION       an option that submits the form; repeatable (default: every option)

Reviewers: only the people named decide, each with their own link (emailed
with a live key); the outcome says who decided and how each one voted.
  --reviewer, -r EMAIL   a reviewer, or "Name <EMAIL>"; repeat for each (up to 20)
  --quorum N             how many votes for one option decide it (default 1)
  --veto OPTION          one vote for this option decides at once; repeatable
  --remind-every DURATION
                         remind those who have not voted this often (60s or more)
  --remind-max N         send at most N reminders (1-10, default 3)
  --escalate-after DURATION
                         if still pending then, add the --escalate-to reviewers
  --escalate-to EMAIL    a reviewer added on escalation, or "Name <EMAIL>"; repeatable

${GLOBAL_HELP}`;

const OPTIONS = {
  option: { type: 'string', short: 'o', multiple: true },
  timeout: { type: 'string' },
  default: { type: 'string' },
  body: { type: 'string' },
  'allow-text': { type: 'boolean' },
  'require-text': { type: 'string', multiple: true },
  form: { type: 'string' },
  values: { type: 'string' },
  'form-on': { type: 'string', multiple: true },
  notify: { type: 'string', multiple: true },
  'notify-slack': { type: 'string' },
  metadata: { type: 'string', multiple: true },
  'idempotency-key': { type: 'string' },
  'no-wait': { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  reviewer: { type: 'string', short: 'r', multiple: true },
  quorum: { type: 'string' },
  veto: { type: 'string', multiple: true },
  'remind-every': { type: 'string' },
  'remind-max': { type: 'string' },
  'escalate-after': { type: 'string' },
  'escalate-to': { type: 'string', multiple: true },
} as const;

export async function askCommand(args: string[]): Promise<number> {
  let json = args.includes('--json');
  try {
    const { values, positionals } = parse(args, OPTIONS);
    json = values.json === true;
    if (values.help) {
      out(ASK_HELP);
      return 0;
    }
    const title = positionals.join(' ').trim();
    if (!title) throw new UsageError('ask needs a question, e.g. pausepoint ask "Deploy v2 to prod?"');
    const params = buildParams(title, values);
    const form = await formOf(values);
    if (form !== undefined) params.form = form;
    const client = clientFrom(values);

    return await withInterrupt(async (signal) => {
      let pause: Pause;
      try {
        pause = await client.pauses.create(params, { idempotencyKey: values['idempotency-key'], signal });
      } catch (error) {
        if (!signal.aborted) throw error;
        // No id to cancel: the service may or may not have created it.
        err('Interrupted before the service answered; any pause it created is still pending.');
        return EXIT.interrupted;
      }
      if (values['no-wait']) {
        if (json) printJson(pause);
        else out([pause.id, ...links(pause)].join('\n'));
        return 0;
      }
      if (!values.quiet) announce(pause);
      const progress = new Progress(pause);
      try {
        const ended = await client.pauses.waitFor(pause.id, { signal });
        progress.stop();
        return finish(outcomeOf(ended), json, form !== undefined);
      } catch (error) {
        progress.stop();
        if (!signal.aborted) throw error;
        // Interrupted: nobody should answer a question no one waits for.
        const cancelled = await client.pauses.cancel(pause.id).catch(() => undefined);
        err(cancelled ? `Interrupted: cancelled ${pause.id}.` : `Interrupted; ${pause.id} was not cancelled.`);
        return EXIT.interrupted;
      }
    });
  } catch (error) {
    reportError(error, json, ASK_HELP);
    return EXIT.error;
  }
}

type Values = ReturnType<typeof parse<typeof OPTIONS>>['values'];

function buildParams(title: string, values: Values): CreatePauseParams {
  const params: CreatePauseParams = { title };
  if (values.body !== undefined) params.body = values.body;
  if (values.option?.length) params.options = values.option;
  if (values['allow-text']) params.allow_text = true;
  if (values['require-text']?.length) params.require_text = values['require-text'];
  if (values.timeout !== undefined) params.expires_in = parseDuration(values.timeout, '--timeout');
  if (values.default !== undefined) {
    const options = values.option?.length ? values.option : ['approve', 'reject'];
    if (!options.includes(values.default)) {
      throw new UsageError(`--default must be one of the options (${options.join(', ')}), got "${values.default}"`);
    }
    params.timeout_default = values.default;
  }
  if (values.notify?.length || values['notify-slack']) {
    params.notify = {};
    if (values.notify?.length) params.notify.email = values.notify;
    if (values['notify-slack']) params.notify.slack_webhook_url = values['notify-slack'];
  }
  if (values.metadata?.length) {
    const metadata: Record<string, string> = {};
    for (const pair of values.metadata) {
      const at = pair.indexOf('=');
      if (at <= 0) throw new UsageError(`--metadata takes KEY=VALUE, got "${pair}"`);
      const key = pair.slice(0, at);
      // As a key it would set the object's prototype, and the API refuses it in a body.
      if (key === '__proto__') throw new UsageError('--metadata: __proto__ is not a key the API accepts');
      metadata[key] = pair.slice(at + 1);
    }
    params.metadata = metadata;
  }
  addReviewers(params, values);
  return params;
}

/** --form and the flags that go with it, read from their files; the service checks what they hold. */
async function formOf(values: Values): Promise<CreatePauseParams['form']> {
  if (values.form === undefined) {
    for (const flag of ['values', 'form-on'] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with --form`);
    }
    return undefined;
  }
  if (values.form === '-' && values.values === '-') {
    throw new UsageError('--form and --values cannot both read stdin (-): give one of them a file');
  }
  const form: NonNullable<CreatePauseParams['form']> = {
    schema: (await readJsonFile(values.form, '--form')) as Record<string, unknown>,
  };
  if (values.values !== undefined)
    form.values = (await readJsonFile(values.values, '--values')) as Record<string, unknown>;
  if (values['form-on']?.length) form.on = values['form-on'];
  return form;
}

/** --reviewer and the flags that only go with it: quorum, veto, reminders, escalation. */
function addReviewers(params: CreatePauseParams, values: Values): void {
  const reviewers = (values.reviewer ?? []).map((text) => parseReviewer(text, '--reviewer'));
  if (reviewers.length === 0) {
    for (const flag of ['quorum', 'veto', 'remind-every', 'remind-max', 'escalate-after', 'escalate-to'] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with --reviewer`);
    }
    return;
  }
  if (params.notify) {
    throw new UsageError(
      '--notify and --notify-slack do not go with --reviewer: each reviewer is emailed their own link',
    );
  }
  params.reviewers = reviewers;
  if (values.quorum !== undefined) params.quorum = positiveInteger(values.quorum, '--quorum');
  if (values.veto?.length) {
    const options = params.options ?? ['approve', 'reject'];
    for (const veto of values.veto) {
      if (!options.includes(veto)) {
        throw new UsageError(`--veto must be one of the options (${options.join(', ')}), got "${veto}"`);
      }
    }
    params.veto = values.veto;
  }
  if (values['remind-every'] !== undefined) {
    params.remind_every = parseDuration(values['remind-every'], '--remind-every');
  }
  if (values['remind-max'] !== undefined) {
    if (values['remind-every'] === undefined) throw new UsageError('--remind-max goes with --remind-every');
    params.remind_max = positiveInteger(values['remind-max'], '--remind-max');
  }
  const after = values['escalate-after'];
  const to = values['escalate-to'] ?? [];
  if (after === undefined && to.length > 0) throw new UsageError('--escalate-to goes with --escalate-after');
  if (after !== undefined && to.length === 0) throw new UsageError('--escalate-after needs --escalate-to');
  if (after !== undefined) {
    params.escalate = {
      after: parseDuration(after, '--escalate-after'),
      reviewers: to.map((text) => parseReviewer(text, '--escalate-to')),
    };
  }
}

/**
 * Where to answer: the shared link, or with reviewers one line each. Their
 * personal links are printed in test mode only, where nobody is emailed; a
 * live link votes as its owner, so it stays out of terminals and CI logs
 * (it is in the pause's JSON for whoever needs it).
 */
function links(pause: Pause): string[] {
  if (pause.reviewers.length === 0) return [String(pause.response_url)];
  return pause.reviewers.map((reviewer) =>
    pause.mode === 'test' ? `${reviewer.email} ${reviewer.response_url}` : reviewer.email,
  );
}

function announce(pause: Pause): void {
  const fallback = pause.timeout_default === null ? 'no default' : `default ${pause.timeout_default}`;
  err(`Asked: ${pause.title} [${pause.options.join(' / ')}] (${pause.id}, expires ${pause.expires_at}, ${fallback})`);
  if (pause.reviewers.length === 0) {
    err(`Answer at: ${pause.response_url}`);
    return;
  }
  const rules = [`${pause.quorum ?? 1} of ${pause.reviewers.length} must agree`];
  if (pause.veto.length > 0) rules.push(`one vote for ${pause.veto.join(' or ')} decides`);
  err(`Reviewers (${rules.join('; ')}):`);
  const width = Math.max(...pause.reviewers.map((reviewer) => reviewerLabel(reviewer).length));
  for (const reviewer of pause.reviewers) {
    const label = reviewerLabel(reviewer);
    err(pause.mode === 'test' ? `  ${label.padEnd(width)}  ${reviewer.response_url}` : `  ${label}`);
  }
  if (pause.escalate !== null) {
    const to = pause.escalate.reviewers.map(reviewerLabel).join(', ');
    err(`Escalates to ${to} if still pending after ${formatDuration(pause.escalate.after)}.`);
  }
  err(
    pause.mode === 'test'
      ? 'Test mode: nobody is emailed; each link above votes as its reviewer.'
      : 'Each reviewer is emailed their own link.',
  );
}

/** The exit code for an outcome: see the top of this file. */
export function exitCodeOf(outcome: Outcome): number {
  if (outcome.status === 'cancelled') return EXIT.other;
  if (outcome.choice === null) return EXIT.timeout;
  return outcome.choice === outcome.pause.options[0] ? EXIT.first : EXIT.other;
}

/**
 * Prints the outcome: as JSON with --json; with a form, its values as JSON on
 * stdout and the outcome in words on stderr; otherwise in words on stdout.
 */
function finish(outcome: Outcome, json: boolean, withForm: boolean): number {
  const code = exitCodeOf(outcome);
  if (json) {
    printJson({
      status: outcome.status,
      choice: outcome.choice,
      text: outcome.text,
      values: outcome.values,
      edited: outcome.edited,
      response_at: outcome.response_at,
      responded_by: outcome.responded_by,
      votes: outcome.votes,
      exit_code: code,
      pause: outcome.pause,
    });
    return code;
  }
  const say = withForm ? err : out;
  if (outcome.status === 'responded') {
    const by = outcome.responded_by === null ? '' : `, decided by ${reviewerLabel(outcome.responded_by)}`;
    const edited = withForm && outcome.edited ? ', values edited' : '';
    say(`Answered: ${outcome.choice}${outcome.text ? ` (${JSON.stringify(outcome.text)})` : ''}${by}${edited}`);
  } else if (outcome.status === 'timed_out') {
    say(outcome.choice === null ? 'Timed out with no answer' : `Timed out: ${outcome.choice} (the default)`);
  } else {
    say('Cancelled');
  }
  if (outcome.pause.reviewers.length > 0) say(votesText(outcome.votes));
  if (withForm) printJson(outcome.values);
  return code;
}

/** "Votes:" and one line per vote, oldest first; "No votes." when there are none. */
function votesText(votes: Vote[]): string {
  if (votes.length === 0) return 'No votes.';
  const width = Math.max(...votes.map((vote) => vote.email.length));
  const choiceWidth = Math.max(...votes.map((vote) => vote.choice.length));
  const lines = votes.map((vote) =>
    `  ${vote.email.padEnd(width)}  ${vote.choice.padEnd(choiceWidth)}  ${vote.voted_at}${vote.text ? `  ${JSON.stringify(vote.text)}` : ''}`.trimEnd(),
  );
  return ['Votes:', ...lines].join('\n');
}
