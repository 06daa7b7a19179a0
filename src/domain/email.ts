// One spelling of an email address for comparing and storing: accounts,
// reviewers and the inbox all go through it.

export const normaliseEmail = (email: string) => email.trim().toLowerCase();
