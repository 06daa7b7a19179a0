import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { normaliseEmail } from '../domain/email.js';
import {
  FIELD_PREFIX,
  fieldText,
  formFields,
  own,
  type PostedField,
  type PostedFields,
} from '../domain/form-fields.js';
import type { Pause, SlackResponder } from '../domain/pause.js';
import { responseToken, reviewerToken } from '../domain/response-token.js';
import type { AttemptResult } from '../domain/retry-schedule.js';
import { parseJsonSafely } from '../domain/safe-json.js';
import { ApiError, type FieldProblem } from '../errors.js';
import type { SlackApp, SlackResult, SlackUser } from '../messages/slack-app.js';
import {
  ACTIONS_BLOCK_PREFIX,
  ANSWER_MODAL,
  INPUT_ACTION,
  type SlackMessage,
  slackAnswerModal,
  slackOutcome,
  TEXT_BLOCK,
} from '../messages/slack-blocks.js';
import { getDeveloper } from '../store/accounts.js';
import {
  insertNotifications,
  type NotificationToSend,
  notificationsOf,
  slackMessageOf,
} from '../store/notifications.js';
import { getPause } from '../store/pauses.js';
import { reviewersOf } from '../store/reviewers.js';
import { recordSlackMessage, recordSlackRecipient, reviewersMessagedInSlack, updatedMessage } from '../store/slack.js';
import { submitAnswer, submitPostedAnswer } from './answer-pause.js';
import { planReviewerEmails } from './plan-notifications.js';

// The Slack app (DESIGN.md "Slack"): posting a question's message and
// updating it once the pause is closed (attempts of the notifications
// outbox), and what a click on one of its buttons does. A click answers
// through submitAnswer, the action the response page calls, with the token
// the page's link would carry: the clicker's own reviewer token, found by
// their Slack email, or the shared link's for a question posted to a channel.

type SlackServices = Pick<ServiceContext, 'store' | 'clock' | 'keys' | 'slack' | 'logger' | 'publicBaseUrl'>;

const notConfigured: AttemptResult = { ok: false, statusCode: null, error: 'Slack is not configured on this server' };

function attemptOf(result: SlackResult<unknown>): AttemptResult {
  if (result.ok) return { ok: true, statusCode: 200 };
  return {
    ok: false,
    statusCode: result.status,
    error: result.error,
    ...(result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs }),
  };
}

/** One attempt of a Slack app notification: post the question (a reviewer's by direct message), or update it. */
export async function attemptSlackMessage(
  services: SlackServices,
  notification: NotificationToSend,
): Promise<AttemptResult> {
  const { slack, store } = services;
  if (!slack) return notConfigured;
  if (notification.kind === 'update') return attemptUpdate(services, slack, notification);
  // A question (or reminder) whose pause closed before it went out (a retry
  // after a 429, say) is not posted: its buttons would answer nothing.
  if (!(await stillPending(services, notification.pause_id))) return closedBeforePosted;
  let channel = notification.recipient;
  if (notification.reviewer_id !== null) {
    const found = await slack.lookupByEmail(notification.recipient);
    if (!found.ok) return attemptOf(found);
    const refused =
      found.value === null
        ? { ok: true as const, value: 'is not in this Slack workspace' }
        : await untrusted(slack, found.value);
    if (!refused.ok) return attemptOf(refused);
    if (refused.value !== null || found.value === null) {
      const emailed = await emailInstead(services, notification);
      return {
        ok: false,
        final: true,
        statusCode: null,
        error: `${notification.recipient} ${refused.value}; ${emailed ? 'emailed instead' : 'their email was sent already'}`,
      };
    }
    // A direct message: to the reviewer's user id, recorded before it is sent.
    channel = found.value.id;
    await recordSlackRecipient(store, { id: notification.id, userId: channel });
  }
  const posted = await slack.postMessage(channel, slackMessageOf(notification));
  if (!posted.ok) return attemptOf(posted);
  await recordSlackMessage(store, { id: notification.id, ...posted.value });
  // Closed while it was being posted: its update may have found it not yet
  // posted and left it to this attempt, so the outcome replaces it now.
  if (!(await stillPending(services, notification.pause_id)) && notification.pause_id !== null) {
    const outcome = await outcomeMessage(services, notification.pause_id);
    if (outcome) await slack.update(posted.value.channel, posted.value.ts, outcome);
  }
  return attemptOf(posted);
}

/**
 * How long a modal's submission waits for Slack's answers about the clicker:
 * its acknowledgement carries the field errors, and Slack waits 3 s for it.
 */
export const INTERACTION_DEADLINE_MS = 2500;

/** Slack's answer, or a failure once `ms` have passed (none: no deadline). */
async function within<T>(ms: number | undefined, work: () => Promise<SlackResult<T>>): Promise<SlackResult<T>> {
  if (ms === undefined) return work();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<SlackResult<T>>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, error: 'Slack did not answer in time', status: null }), ms);
  });
  try {
    return await Promise.race([work(), late]);
  } finally {
    clearTimeout(timer);
  }
}

const closedBeforePosted: AttemptResult = {
  ok: false,
  final: true,
  statusCode: null,
  error: 'the pause was closed before the question was posted; nothing was sent',
};

async function stillPending(services: SlackServices, pauseId: string | null): Promise<boolean> {
  if (pauseId === null) return true;
  return (await getPause(services.store, pauseId))?.status === 'pending';
}

/**
 * Why a Slack user may not answer (nor be sent a reviewer's buttons), read
 * from Slack's documented user fields; null when they may. Only a confirmed
 * email of a member of the bot's own workspace is trusted.
 */
async function untrusted(slack: SlackApp, user: SlackUser): Promise<SlackResult<string | null>> {
  if (user.deleted) return { ok: true, value: 'is deactivated in Slack' };
  if (user.isBot) return { ok: true, value: 'is a bot in Slack' };
  if (user.isStranger) return { ok: true, value: 'is an external (Slack Connect) user' };
  if (user.emailConfirmed === false) return { ok: true, value: 'has not confirmed their email in Slack' };
  const team = await slack.ownTeam();
  if (!team.ok) return team;
  if (user.teamId !== team.value) return { ok: true, value: "is not a member of this service's Slack workspace" };
  return { ok: true, value: null };
}

async function attemptUpdate(
  services: SlackServices,
  slack: SlackApp,
  notification: NotificationToSend,
): Promise<AttemptResult> {
  const original = notification.updates_id ? await updatedMessage(services.store, notification.updates_id) : undefined;
  if (!original?.slack_channel || !original.slack_ts) {
    // Never posted (it failed, or its pause closed first): nothing to update.
    // Not posted yet: nothing for this update to give up on either; the
    // original's own attempt sees the pause closed and posts nothing, or,
    // posted in that moment, replaces itself with the outcome.
    return { ok: true, statusCode: null };
  }
  // Every Slack message is about a pause; only the webhook-disabled email has none.
  const message = notification.pause_id === null ? undefined : await outcomeMessage(services, notification.pause_id);
  if (!message) return { ok: true, statusCode: null };
  return attemptOf(await slack.update(original.slack_channel, original.slack_ts, message));
}

/** What a closed pause's messages become: the outcome, who decided, each voter by name with their vote. */
async function outcomeMessage(services: Pick<ServiceContext, 'store'>, pauseId: string): Promise<SlackMessage | null> {
  const { store } = services;
  const pause = await getPause(store, pauseId);
  if (!pause || pause.status === 'pending') return null;
  const reviewers = (await reviewersOf(store, [pauseId])).get(pauseId) ?? [];
  const nameOf = (reviewer: { name: string | null; email: string }) => reviewer.name ?? reviewer.email;
  const decider = reviewers.find((reviewer) => reviewer.id === pause.respondedBy);
  return slackOutcome({
    title: pause.title,
    body: pause.body,
    status: pause.status,
    choice: pause.responseChoice,
    decidedBy: decider ? nameOf(decider) : (pause.respondedBySlack?.name ?? null),
    votes: reviewers
      .filter((reviewer) => reviewer.vote_choice !== null)
      .map((reviewer) => ({ name: nameOf(reviewer), choice: reviewer.vote_choice as string })),
  });
}

/**
 * A reviewer Slack does not know is emailed the question instead, unless an
 * email of the same kind was queued for them already (deliver: email and
 * slack, or an earlier attempt). Whether one was written now.
 */
async function emailInstead(services: SlackServices, notification: NotificationToSend): Promise<boolean> {
  const { store, clock } = services;
  if (notification.pause_id === null) return false;
  const pause = await getPause(store, notification.pause_id);
  if (!pause) return false;
  const sent = (await notificationsOf(store, [pause])).get(pause.id) ?? [];
  const already = sent.some(
    (row) => row.channel === 'email' && row.reviewer_id === notification.reviewer_id && row.kind === notification.kind,
  );
  if (already) return false;
  const reviewers = (await reviewersOf(store, [pause.id])).get(pause.id) ?? [];
  const reviewer = reviewers.find((row) => row.id === notification.reviewer_id);
  if (!reviewer) return false;
  const rows = planReviewerEmails(services, pause, [reviewer], {
    kind: notification.kind,
    reviewerCount: reviewers.length,
    now: isoTime(clock.now()),
    askedBy: (await getDeveloper(store, pause.developerId))?.email ?? '',
  });
  await store.write((trx) => insertNotifications(store, rows, trx));
  return true;
}

// --- Interactions: a click on a button of a question's message ---

/** What to do with an interaction, however it arrived (HTTP mode or Socket Mode). */
export interface ReceivedInteraction {
  /** The acknowledgement's body, sent at once (Slack waits 3 s); none for an empty 200. */
  response?: object;
  /** The work that follows the acknowledgement. */
  after?: () => Promise<void>;
  /** A click or submission not in the shape Slack documents: which kind; nothing was done. */
  invalid?: 'block_actions' | 'view_submission';
}

/**
 * An interaction Slack sent (the JSON of its `payload`): a click is
 * acknowledged first and answered after; a modal's submission is answered in
 * its acknowledgement; anything else is acknowledged and left alone. A click
 * or a submission that is not in the shape Slack documents is `invalid`
 * (HTTP mode answers 400), and nothing is recorded.
 */
export async function receiveInteraction(services: SlackServices, payload: unknown): Promise<ReceivedInteraction> {
  const type = typeof payload === 'object' && payload !== null ? (payload as { type?: unknown }).type : undefined;
  if (type === 'block_actions') {
    if (!Value.Check(SlackBlockActionsSchema, payload)) return { invalid: 'block_actions' };
    return { after: () => answerFromSlack(services, payload) };
  }
  // A modal's answer: its field errors go back in the acknowledgement itself.
  if (type === 'view_submission') {
    if (!Value.Check(SlackViewSubmissionSchema, payload)) return { invalid: 'view_submission' };
    return submitFromModal(services, payload);
  }
  return {};
}

const SlackId = Type.String({ minLength: 1, maxLength: 255 });

/** The parts of Slack's `block_actions` payload a click is read from (other properties are let through). */
export const SlackBlockActionsSchema = Type.Object({
  type: Type.Literal('block_actions'),
  user: Type.Object({ id: SlackId }),
  channel: Type.Optional(Type.Object({ id: SlackId })),
  container: Type.Optional(Type.Object({ channel_id: Type.Optional(SlackId) })),
  trigger_id: Type.Optional(Type.String({ maxLength: 1000 })),
  actions: Type.Array(
    Type.Object({
      action_id: Type.Optional(Type.String({ maxLength: 255 })),
      block_id: Type.String({ maxLength: 255 }),
      value: Type.String({ maxLength: 2000 }),
    }),
    { minItems: 1 },
  ),
});
export type SlackBlockActions = Static<typeof SlackBlockActionsSchema>;

export const SLACK_MESSAGES = {
  unknown: 'This button belongs to no question this service knows; nothing was recorded.',
  notReviewer: 'Only the named reviewers of this question can answer it; nothing was recorded.',
  failed: 'Your answer could not be recorded because of an error on this service; try again, or use the link.',
  noProfile: 'Your Slack profile could not be read, so your answer was not recorded; try again.',
  untrusted:
    'Only a confirmed member of this workspace (not a deactivated, bot or external account) can answer; nothing was recorded.',
  needsPage: (url: string) => `This answer needs a reason or the form's fields; give them on the page: ${url}`,
  recorded: (choice: string) => `Recorded: ${choice}. The question is decided.`,
  voted: (choice: string) => `Your vote (${choice}) is counted; the question waits for more votes.`,
};

/**
 * A click: the clicker is read from Slack (users.info), then answers as the
 * response page would, with the same rules; whatever is not recorded, and
 * why, is said in a message only the clicker sees.
 */
export async function answerFromSlack(services: SlackServices, payload: SlackBlockActions): Promise<void> {
  const { slack, store, logger } = services;
  if (!slack) return;
  const userId = payload.user?.id;
  const channelId = payload.channel?.id ?? payload.container?.channel_id;
  if (!userId) return;
  const tell = async (text: string) => {
    if (!channelId) return;
    const told = await slack.postEphemeral(channelId, userId, text);
    if (!told.ok) logger.warn({ error: told.error }, 'a Slack message to the clicker could not be sent');
  };
  const action = payload.actions?.[0];
  const choice = action?.value;
  if (!action?.block_id?.startsWith(ACTIONS_BLOCK_PREFIX) || typeof choice !== 'string')
    return tell(SLACK_MESSAGES.unknown);
  const clicker = await clickerToken(
    services,
    slack,
    await getPause(store, action.block_id.slice(ACTIONS_BLOCK_PREFIX.length)),
    userId,
  );
  if ('refused' in clicker) return tell(clicker.refused);
  const { token, responder } = clicker;
  const pause = clicker.pause;
  if (pause.requireText.includes(choice) || pause.form?.on.includes(choice)) {
    const opened = payload.trigger_id
      ? await slack.openView(payload.trigger_id, answerModal(pause, choice, { p: pause.id, c: choice, ch: channelId }))
      : undefined;
    if (!opened?.ok) return tell(SLACK_MESSAGES.needsPage(`${services.publicBaseUrl}/r/${token}`));
    return;
  }
  try {
    const result = await submitAnswer(services, token, { choice, respondedBySlack: responder });
    await tell(result.status === 'pending' ? SLACK_MESSAGES.voted(choice) : SLACK_MESSAGES.recorded(choice));
  } catch (error) {
    // Detached work: nothing is thrown from here; the clicker is told either way.
    if (error instanceof ApiError) return tell(`${error.message} Nothing was recorded.`);
    logger.error({ err: error }, 'a Slack click could not be answered');
    await tell(SLACK_MESSAGES.failed);
  }
}

/** What a modal keeps for its submission (Slack holds it; the submission is signed): which pause, choice and channel. */
const ModalMetadataSchema = Type.Object({
  p: Type.String({ maxLength: 255 }),
  c: Type.String({ maxLength: 2000 }),
  ch: Type.Optional(SlackId),
});
type ModalMetadata = Static<typeof ModalMetadataSchema>;

function answerModal(pause: Pause, choice: string, metadata: ModalMetadata): object {
  const form = pause.form?.on.includes(choice) ? pause.form : null;
  const fields = form
    ? formFields(form.schema).map((field) => ({ field, text: fieldText(field, own(form.values, field.name)) }))
    : [];
  return slackAnswerModal({
    title: pause.title,
    body: pause.body,
    choice,
    allowText: pause.allowText,
    requireText: pause.requireText.includes(choice),
    fields,
    privateMetadata: JSON.stringify(metadata),
  });
}

const OptionSchema = Type.Object({ value: Type.String() });

/** An input's state as Slack sends it: a text (or number) input's value, a select's option, a multi-select's or checkboxes' options. */
const SlackInputStateSchema = Type.Object({
  value: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  selected_option: Type.Optional(Type.Union([OptionSchema, Type.Null()])),
  selected_options: Type.Optional(Type.Array(OptionSchema)),
});
type SlackInputState = Static<typeof SlackInputStateSchema>;

/** The parts of Slack's `view_submission` payload an answer is read from (other properties are let through). */
export const SlackViewSubmissionSchema = Type.Object({
  type: Type.Literal('view_submission'),
  user: Type.Object({ id: SlackId }),
  view: Type.Object({
    callback_id: Type.String({ maxLength: 255 }),
    private_metadata: Type.String({ maxLength: 3000 }),
    state: Type.Object({
      values: Type.Record(Type.String(), Type.Record(Type.String(), SlackInputStateSchema)),
    }),
  }),
});
export type SlackViewSubmission = Static<typeof SlackViewSubmissionSchema>;

/** An input's state as the page would post it: one text, or the texts of those chosen. */
function postedOf(state: SlackInputState | undefined): PostedField {
  if (!state) return undefined;
  if (Array.isArray(state.selected_options)) return state.selected_options.map((o) => String(o.value ?? ''));
  if (state.selected_option !== undefined) return state.selected_option?.value ?? '';
  return state.value ?? '';
}

/**
 * A modal's answer: read as the page's form is read (submitPostedAnswer, the
 * same rules and messages); each problem goes back beside its input
 * (`response_action: errors`), anything else closes the modal and is said to
 * the clicker alone.
 */
async function submitFromModal(services: SlackServices, view: SlackViewSubmission): Promise<ReceivedInteraction> {
  const { slack, store } = services;
  const userId = view.user.id;
  if (!slack || view.view.callback_id !== ANSWER_MODAL) return {};
  let metadata: unknown;
  try {
    metadata = parseJsonSafely(view.view.private_metadata);
  } catch {
    metadata = undefined;
  }
  // Slack keeps what this service wrote, and the submission is signed: anything else is not ours.
  if (!Value.Check(ModalMetadataSchema, metadata)) return { invalid: 'view_submission' };
  const tell = (text: string) => async () => {
    if (metadata.ch) await slack.postEphemeral(metadata.ch, userId, text);
  };
  const pause = await getPause(store, metadata.p);
  if (!pause) return { response: CLEAR, after: tell(SLACK_MESSAGES.unknown) };
  const clicker = await clickerToken(services, slack, pause, userId, INTERACTION_DEADLINE_MS);
  if ('refused' in clicker) return { response: CLEAR, after: tell(clicker.refused) };
  const { token, responder } = clicker;

  const values = view.view.state.values;
  const fields: PostedFields = {};
  for (const field of pause.form ? formFields(pause.form.schema) : []) {
    const posted = postedOf(own(values, `${FIELD_PREFIX}${field.name}`)?.[INPUT_ACTION]);
    if (posted !== undefined) fields[field.name] = posted;
  }
  const text = postedOf(own(values, TEXT_BLOCK)?.[INPUT_ACTION]);
  const choice = metadata.c;
  try {
    const result = await submitPostedAnswer(services, token, {
      choice,
      ...(typeof text === 'string' && text !== '' ? { text } : {}),
      ...(pause.form?.on.includes(choice) ? { fields } : {}),
      respondedBySlack: responder,
    });
    return {
      response: CLEAR,
      after: tell(result.status === 'pending' ? SLACK_MESSAGES.voted(choice) : SLACK_MESSAGES.recorded(choice)),
    };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const problems = (error.details?.fields as FieldProblem[] | undefined) ?? [];
    if (problems.length === 0) return { response: CLEAR, after: tell(`${error.message} Nothing was recorded.`) };
    const errors: Record<string, string> = {};
    for (const { field, problem } of problems) {
      // A nested field's problem goes beside its top-level input (values.items.0 → values.items).
      const block =
        field === TEXT_BLOCK ? TEXT_BLOCK : `${FIELD_PREFIX}${field.slice(FIELD_PREFIX.length).split('.')[0]}`;
      errors[block] = errors[block] ? `${errors[block]}; ${problem}` : problem;
    }
    return { response: { response_action: 'errors', errors } };
  }
}

/** Closes the modal (and any stacked on it). */
const CLEAR = { response_action: 'clear' };

/**
 * Who is clicking and may they answer this pause (a button's click and a
 * modal's submission alike): the clicker is read from Slack (users.info) and
 * must be a trusted member of the bot's workspace. A question posted to a
 * channel answers with the shared link's token; a reviewer's with their own,
 * only when it is clicked by the Slack user their direct message was posted
 * to (and whose email is theirs). Otherwise the message that says why.
 */
async function clickerToken(
  services: SlackServices,
  slack: SlackApp,
  pause: Pause | undefined,
  userId: string,
  deadlineMs?: number,
): Promise<{ token: string; responder: SlackResponder; pause: Pause } | { refused: string }> {
  if (!pause || (pause.quorum === null && !pause.notify?.slack)) return { refused: SLACK_MESSAGES.unknown };
  // Slack's answers about the clicker, within the deadline (a modal's
  // acknowledgement waits on them, and Slack waits 3 s for it).
  const asked = within(deadlineMs, async () => {
    const who = await slack.userInfo(userId);
    if (!who.ok) return who;
    const refused = await untrusted(slack, who.value);
    return refused.ok ? { ok: true as const, value: { user: who.value, refused: refused.value } } : refused;
  });
  const answered = await asked;
  if (!answered.ok) return { refused: SLACK_MESSAGES.noProfile };
  if (answered.value.refused !== null) return { refused: SLACK_MESSAGES.untrusted };
  const who = answered.value.user;
  const responder: SlackResponder = { slack_user_id: userId, email: who.email, name: who.name };
  const key = services.keys.respondToken;
  if (pause.quorum === null) return { token: responseToken(key, pause.id), responder, pause };
  if (!responder.email) return { refused: SLACK_MESSAGES.notReviewer };
  const email = normaliseEmail(responder.email);
  const messaged = await reviewersMessagedInSlack(services.store, pause.id, userId);
  const reviewers = (await reviewersOf(services.store, [pause.id])).get(pause.id) ?? [];
  const reviewer = reviewers.find((row) => row.email === email && messaged.includes(row.id));
  return reviewer
    ? { token: reviewerToken(key, pause.id, reviewer.id), responder, pause }
    : { refused: SLACK_MESSAGES.notReviewer };
}
