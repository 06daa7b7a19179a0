import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Clock } from '../../src/domain/clock.js';
import { type HttpsReceiver, type Responder, startHttpsReceiver } from './https-receiver.js';
import { startTestService, type TestService } from './service.js';

// What the in-process webhook tests share: a test service that delivers to a
// local HTTPS receiver (it admits 127.0.0.0/8 and trusts the receiver's
// throw-away CA). webhookTests() registers a file's hooks: the receiver and the
// service for the whole file, the receiver reset (and its default answer set
// again) before each test, and other services started on the same receiver
// destroyed after the test that started them (after the file when started
// outside a test). Tests of a file using it run one at a time (no it.concurrent).

type Env = Record<string, string>;

/** What lets a service deliver to the local receiver. */
const LOCAL_NETWORKS: Env = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' };

export interface WebhookTestsOptions {
  /**
   * The file's service settings, besides the allowed networks. A function is
   * called in beforeAll, after the file's earlier beforeAll hooks (for a value
   * known only then, e.g. an SMTP receiver's URL).
   */
  env?: Env | (() => Env);
  /** The file's service's clock. */
  clock?: Clock;
  /** The receiver's answer when none is queued: set at its start and again before each test (200 "ok" unless given). */
  defaultResponse?: Responder;
}

export interface WebhookTests {
  /** The file's HTTPS receiver (reset before each test). */
  readonly receiver: HttpsReceiver;
  /** The file's service, delivering to the receiver. */
  readonly service: TestService;
  /** Another service delivering to the receiver, with `env` besides the allowed networks; destroyed for the caller. */
  startAnother(env?: Env): Promise<TestService>;
}

export function webhookTests(options: WebhookTestsOptions = {}): WebhookTests {
  const defaultResponse = options.defaultResponse ?? {};
  let receiver: HttpsReceiver | undefined;
  let service: TestService | undefined;
  let inTest = false;
  const startedInTest: TestService[] = [];
  const startedForFile: TestService[] = [];

  beforeAll(async () => {
    receiver = await startHttpsReceiver({ defaultResponse });
    const env = typeof options.env === 'function' ? options.env() : options.env;
    service = await startTestService({
      clock: options.clock,
      env: { ...LOCAL_NETWORKS, ...env },
      outboundCa: receiver.ca,
    });
  });
  afterAll(async () => {
    try {
      await destroyAll(startedForFile);
    } finally {
      try {
        await service?.destroy();
      } finally {
        await receiver?.close();
      }
    }
  });
  beforeEach(() => {
    inTest = true;
    receiver?.reset();
    receiver?.setDefault(defaultResponse);
  });
  afterEach(async () => {
    inTest = false;
    await destroyAll(startedInTest);
  });

  const receiverOf = () => {
    if (!receiver) throw new Error('the receiver starts in beforeAll');
    return receiver;
  };

  return {
    get receiver() {
      return receiverOf();
    },
    get service() {
      if (!service) throw new Error('the service starts in beforeAll');
      return service;
    },
    async startAnother(env = {}) {
      const other = await startTestService({ env: { ...LOCAL_NETWORKS, ...env }, outboundCa: receiverOf().ca });
      (inTest ? startedInTest : startedForFile).push(other);
      return other;
    },
  };
}

/** Destroys every service of the list, and empties it; one that fails does not keep the others running. */
async function destroyAll(services: TestService[]): Promise<void> {
  const results = await Promise.allSettled(services.splice(0).map((service) => service.destroy()));
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
  if (failures.length > 0) throw new AggregateError(failures, 'a test service could not be destroyed');
}
