import { requestSessions, sessionCookie } from '../web/session.js';
import type { InboxSignedIn } from './layout.js';

// The inbox's own cookie and CSRF purpose (its key is keys.inboxCsrf), and
// where each request's session is kept while it runs.

export const inboxSessions = requestSessions<InboxSignedIn>();
export const inboxCookie = sessionCookie('pausepoint_inbox');
export const INBOX_CSRF = 'inbox-csrf';
