import { expect } from 'vitest';
import { ConsoleClient, type ConsoleReply } from './console.js';
import { eventually } from './pauses.js';
import type { SmtpReceiver } from './smtp.js';

// A browser-less client for the reviewers' inbox: the console client's
// cookie jar and form posts, plus the email-link sign-in.

export const LINK_SUBJECT = 'Your sign-in link to the pausepoint inbox';

/** The sign-in links emailed to this address so far, oldest first. */
export function linksTo(smtp: SmtpReceiver, email: string): string[] {
  return smtp.mails
    .filter((mail) => mail.to.includes(email) && mail.parsed.subject === LINK_SUBJECT)
    .map((mail) => {
      const match = /(https?:\/\/\S+\/inbox\/link\/\S+)/.exec(mail.parsed.text ?? '');
      if (!match) throw new Error('no link in the sign-in email');
      return match[1]!;
    });
}

/** Waits for the next sign-in link to this address (after `seen` of them). */
export async function nextLink(smtp: SmtpReceiver, email: string, seen = 0): Promise<string> {
  await eventually(() => expect(linksTo(smtp, email).length).toBeGreaterThan(seen), 10_000);
  return linksTo(smtp, email)[seen]!;
}

export class InboxClient extends ConsoleClient {
  /** Asks for a link; the page is the same whatever the address. */
  requestLink(email: string): Promise<ConsoleReply> {
    return this.post('/inbox/sign-in', { email });
  }

  /** Uses a link as a person does: opens it, then presses its button. */
  async useLink(link: string): Promise<ConsoleReply> {
    const path = new URL(link).pathname;
    const page = await this.get(path);
    if (page.status !== 200) return page;
    expect(page.text).toContain(`action="${path}"`);
    return this.post(path, {});
  }

  /** Asks for a link, reads it from the email and signs in with it; expects it to work. */
  async signInByEmail(email: string, smtp: SmtpReceiver): Promise<ConsoleReply> {
    const seen = linksTo(smtp, email).length;
    const asked = await this.requestLink(email);
    expect(asked.status, asked.text).toBe(200);
    const reply = await this.useLink(await nextLink(smtp, email, seen));
    expect(reply.status, reply.text).toBe(303);
    expect(reply.location).toBe('/inbox');
    return reply;
  }

  override csrf(path = '/inbox'): Promise<string> {
    return super.csrf(path);
  }
}
