import { afterAll, beforeAll, expect, it } from 'vitest';
import { testEngine } from '../helpers/database.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { type HttpsReceiver, type ReceivedRequest, startHttpsReceiver } from '../helpers/https-receiver.js';
import { sleep } from '../helpers/pauses.js';
import { killAllServices, SHORT_LEASE } from '../helpers/process.js';
import { type SmtpReceiver, startSmtpReceiver } from '../helpers/smtp.js';
import { buildIfStale, type Cluster, startCluster } from './cluster.js';
import { type ChaosWebhook, checkInvariants } from './invariants.js';
import { chaosSeed, type Random, seededRandom } from './random.js';
import { waitUntilSettled } from './settle.js';
import { startWorkload } from './workload.js';

// Crash tests (npm run test:chaos; not part of npm test). Clients create,
// answer and cancel pauses in bursts while the service delivers webhooks to a
// real HTTPS receiver and emails to a real SMTP server, and the service is
// killed with SIGKILL at random moments and started again on the same
// database. Then everything settles and the invariants are checked (see
// invariants.ts). SQLite runs one instance; PostgreSQL runs two over one
// database, one of them killed at a time while the other carries on.
//
// The seed is printed; CHAOS_SEED=<seed> npm run test:chaos repeats its choices.

// Four kills each keep a run near a minute per engine on two busy cores, most of it spent restarting.
const PLAN = testEngine === 'postgres' ? { instances: 2, kills: 4 } : { instances: 1, kills: 4 };
const SEED = chaosSeed();

let receiver: HttpsReceiver | undefined;
let smtp: SmtpReceiver | undefined;
let cluster: Cluster | undefined;
beforeAll(buildIfStale, 240_000);
afterAll(async () => {
  await killAllServices();
  await cluster?.close();
  await receiver?.close();
  await smtp?.close();
});

it(`keeps every invariant through ${PLAN.kills} kill -9s on ${testEngine} (CHAOS_SEED=${SEED})`, async () => {
  console.log(`chaos: ${testEngine}, ${PLAN.instances} instance(s), CHAOS_SEED=${SEED}`);
  const random = seededRandom(SEED);
  const runId = `chaos-${SEED}-${Date.now()}`;
  const started = Date.now();
  const timeline = (line: string) => console.log(`chaos +${((Date.now() - started) / 1000).toFixed(1)}s ${line}`);

  receiver = await startHttpsReceiver({ defaultResponse: flakyReceiver(random.fork(1000)) });
  smtp = await startSmtpReceiver();
  cluster = await startCluster({ instances: PLAN.instances, caFile: receiver.caFile, env: serviceEnv(smtp.url) });
  const accounts = [await registerAccount(baseUrl(cluster)), await registerAccount(baseUrl(cluster))];
  const webhooks = await addWebhooks(cluster, receiver, accounts);

  const workload = startWorkload({ cluster, accounts, random: random.fork(1), clients: 6, runId });
  await killAndRestart(cluster, random.fork(2), timeline);
  await sleep(1500); // the workload goes on after the last restart
  await workload.stop();
  await workload.resolveUndecided();
  timeline('workload stopped; settling');

  const settling = await waitUntilSettled(cluster.store, { horizonMs: 60_000, timeoutMs: 40_000 });
  timeline(`settled: ${JSON.stringify(settling)}`);
  const { ledger } = workload;
  timeline(
    `${ledger.created.size} creates, ${ledger.answered.length} answers, ${ledger.cancelled.length} cancels ` +
      `acknowledged; no reply to ${JSON.stringify(ledger.noReply)}; ${receiver.requests.length} webhook ` +
      `requests, ${smtp.mails.length} mails`,
  );
  for (const record of cluster.errorsLogged()) timeline(`logged an error: ${JSON.stringify(record).slice(0, 500)}`);
  const violations = await checkInvariants({
    store: cluster.store,
    ledger,
    runId,
    webhooks,
    requests: receiver.requests,
    mails: smtp.mails,
  });
  expect(violations, `re-run with CHAOS_SEED=${SEED}`).toEqual([]);
  expect(settling.settled, `re-run with CHAOS_SEED=${SEED}`).toBe(true);
}, 200_000);

function serviceEnv(smtpUrl: string): Record<string, string> {
  return {
    SMTP_URL: smtpUrl,
    EMAIL_FROM: 'pausepoint chaos <chaos@example.com>',
    // Enough retries that a first attempt refused and one or two cut short by kills still end in success.
    WEBHOOK_RETRY_SCHEDULE_MS: '200,400,800,1000,1000,1000,1000',
    PLAN_QUOTAS: 'free:1000000',
    // A killed instance's claims are attempted again 2 s after they were claimed, not 10 s.
    ...SHORT_LEASE,
    API_RATE_LIMIT: '1000000/60',
    RESPOND_RATE_LIMIT: '1000000/60',
  };
}

/** A healthy receiver, slow at times, that refuses some deliveries' first attempt (so retries are pending at kills). */
function flakyReceiver(random: Random) {
  const seen = new Set<string>();
  return (request: ReceivedRequest) => {
    const delivery = String(request.headers['x-service-delivery']);
    const first = !seen.has(delivery);
    seen.add(delivery);
    const delayMs = random.int(0, 80);
    return first && random.chance(0.1) ? { status: 503, delayMs } : { delayMs };
  };
}

const baseUrl = (cluster: Cluster) => cluster.running()[0]!.url!;

/** Two developers, each with live and test webhooks, one of them for a single event type. */
async function addWebhooks(cluster: Cluster, receiver: HttpsReceiver, [a, b]: Account[]): Promise<ChaosWebhook[]> {
  const all = ['pause.responded', 'pause.timed_out', 'pause.cancelled'];
  const plan: Array<[Account, string, 'live' | 'test', string[]]> = [
    [a!, 'a-live', 'live', all],
    [a!, 'a-test', 'test', all],
    [a!, 'a-test-responded', 'test', ['pause.responded']],
    [b!, 'b-live', 'live', ['pause.cancelled', 'pause.timed_out']],
    [b!, 'b-test', 'test', all],
  ];
  const webhooks: ChaosWebhook[] = [];
  for (const [account, name, mode, events] of plan) {
    const path = `/hook/${name}`;
    const secret = `whsec_chaos_${name}_0123456789`;
    const reply = await call(baseUrl(cluster), 'POST', '/v1/webhooks', {
      token: mode === 'live' ? account.live : account.test,
      body: { url: `${receiver.url}${path}`, events, secret },
    });
    if (reply.status !== 201) throw new Error(`webhook ${name}: ${reply.status} ${reply.text}`);
    webhooks.push({ id: reply.body.id, path, secret });
  }
  return webhooks;
}

/** The kills: a burst of random length, SIGKILL one running instance, start it again (the others carry on). */
async function killAndRestart(cluster: Cluster, random: Random, timeline: (line: string) => void) {
  for (let round = 1; round <= PLAN.kills; round++) {
    await sleep(random.int(1500, 4000));
    const name = await cluster.killOne(random);
    timeline(`kill -9 ${name} (round ${round} of ${PLAN.kills})`);
    await sleep(random.int(0, PLAN.instances > 1 ? 1000 : 300));
    await cluster.restart(name);
    timeline(`${name} restarted`);
  }
}
