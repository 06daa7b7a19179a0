// How reviewers' votes decide a pause. A vote for a veto option decides at
// once; otherwise the first option to collect `quorum` votes decides. When
// the quorum can no longer be reached the pause simply waits for its expiry.

export interface VoteRules {
  quorum: number;
  veto: readonly string[];
}

/** Whether the vote just cast for `choice` decides the pause, given every vote now counted (that one included). */
export function decides(rules: VoteRules, choice: string, votesForChoice: number): boolean {
  return rules.veto.includes(choice) || votesForChoice >= rules.quorum;
}

/** The most reviewers a pause may name at creation, and the most its escalation may add. */
export const MAX_REVIEWERS = 20;
/** The longest name a reviewer may be greeted by, in characters. */
export const MAX_REVIEWER_NAME_LENGTH = 100;
export const MIN_REMIND_EVERY_SECONDS = 60;
export const DEFAULT_REMIND_MAX = 3;
export const MAX_REMIND_MAX = 10;
