// One spelling of an email address for comparing and storing: accounts,
// reviewers and the inbox all go through it.

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/** The longest email address accepted (RFC 5321's limit on a forward path). */
export const MAX_EMAIL_LENGTH = 254;
