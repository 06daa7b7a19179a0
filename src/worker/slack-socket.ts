import { SocketModeClient, UnrecoverableSocketModeStartError } from '@slack/socket-mode';
import { type FetchFunction, WebAPIPlatformError } from '@slack/web-api';
import { type ReceivedInteraction, receiveInteraction } from '../actions/slack.js';
import type { ServiceContext } from '../context.js';
import { slackLogger } from '../messages/slack-app.js';

// Socket Mode (SLACK_APP_TOKEN): the service dials out to Slack and hears the
// buttons over a WebSocket, so it needs no public URL. The official client
// (@slack/socket-mode) opens the connection (apps.connections.open), waits for
// `hello`, and reconnects by itself when the socket drops or Slack asks it to.
// Each envelope is acknowledged at once, with the response an interaction
// needs, and handled as HTTP mode handles a request (actions/slack.ts).
//
// With several instances each holds a connection, and Slack delivers each
// envelope to one of them; should Slack deliver one again (an acknowledgement
// lost with a dropped socket), the answer's own rules make it harmless: the
// first answer wins, and a reviewer votes once.

/** How long to wait before trying again when the first connection cannot be made. */
const START_RETRY_MS = 2000;

export class SlackSocket {
  private readonly client: SocketModeClient;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  /** The interactions being answered: stop() waits for them. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly services: ServiceContext,
    appToken: string,
    apiUrl: string,
  ) {
    const { logger, outbound } = services;
    this.client = new SocketModeClient({
      appToken,
      logger: slackLogger(logger, 'Slack Socket Mode'),
      clientOptions: { slackApiUrl: apiUrl, fetch: outbound.fetch as unknown as FetchFunction },
      dispatcher: outbound.socketDispatcher,
    });
    this.client.on(
      'interactive',
      async ({ body, ack }: { body: unknown; ack: (response?: object) => Promise<void> }) => {
        let received: ReceivedInteraction = {};
        try {
          received = await receiveInteraction(this.services, body);
        } catch (error) {
          logger.error({ err: error }, 'a Slack interaction could not be handled');
        }
        const { response, after, invalid } = received;
        if (invalid)
          logger.warn({ slack: invalid }, 'a Slack interaction not in the shape Slack documents was ignored');
        try {
          await ack(response);
        } catch (error) {
          logger.warn({ err: error }, 'a Slack envelope could not be acknowledged');
        }
        if (!after) return;
        const work = after()
          .catch((error) => logger.error({ err: error }, 'a Slack interaction could not be handled'))
          .finally(() => this.inFlight.delete(work));
        this.inFlight.add(work);
        await work;
      },
    );
  }

  /** Connects, and keeps trying in the background until the first connection is made. */
  start(): void {
    const attempt = () => {
      if (this.stopped) return;
      this.client.start().then(
        () => this.services.logger.info('Slack Socket Mode connected'),
        (error) => {
          // A token Slack refuses (invalid_auth, a removed app…) is not mended by asking again.
          if (unrecoverable(error)) {
            this.services.logger.error(
              { slack: error.data.error },
              'Slack Socket Mode cannot connect: Slack refuses the app-level token (SLACK_APP_TOKEN); not trying again',
            );
            return;
          }
          this.services.logger.warn({ err: error }, 'Slack Socket Mode could not connect; trying again');
          if (!this.stopped) this.retry = setTimeout(attempt, START_RETRY_MS);
        },
      );
    };
    attempt();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.client.disconnect().catch(() => undefined);
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}

const UNRECOVERABLE: readonly string[] = Object.values(UnrecoverableSocketModeStartError);

function unrecoverable(error: unknown): error is WebAPIPlatformError {
  return error instanceof WebAPIPlatformError && UNRECOVERABLE.includes(String(error.data.error));
}
