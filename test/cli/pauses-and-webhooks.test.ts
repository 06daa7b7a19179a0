import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { createPause, tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { runCli } from './run-cli.js';

// `pausepoint pauses …` and `pausepoint webhooks …`, text and --json, against
// a real service.

vi.setConfig({ testTimeout: 60_000 });

let service: TestService;
let dev: Account;
let env: Record<string, string>;

beforeAll(async () => {
  service = await startTestService({ env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' } });
  dev = await registerAccount(service.url);
  env = { PAUSEPOINT_API_KEY: dev.test, PAUSEPOINT_BASE_URL: service.url };
});
afterAll(() => service?.destroy());

describe('pauses', () => {
  it('lists, gets and cancels pauses', async () => {
    const first = await createPause(service.url, dev.test, { title: 'First question?' });
    const second = await createPause(service.url, dev.test, {
      title: 'Second question?',
      allow_text: true,
      metadata: { ticket: 9 },
    });
    await call(service.url, 'POST', `/v1/respond/${tokenOf(second)}`, { body: { choice: 'reject', text: 'no' } });

    // Independent reads run side by side: each is a process start.
    const [list, json, firstOfTwo, get, getJson] = await Promise.all([
      runCli(['pauses', 'list'], env),
      runCli(['pauses', 'list', '--json', '--status', 'pending', '--limit', '1'], env),
      runCli(['pauses', 'list', '--json', '--limit', '1'], env),
      runCli(['pauses', 'get', second.id], env),
      runCli(['pauses', 'get', first.id, '--json'], env),
    ]);
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+CHOICE\s+CREATED\s+TITLE$/);
    expect(lines[1]).toMatch(new RegExp(`^${second.id}\\s+responded\\s+reject\\s+\\S+\\s+Second question\\?$`));
    expect(lines[2]).toMatch(new RegExp(`^${first.id}\\s+pending\\s+-\\s+\\S+\\s+First question\\?$`));
    // --json prints the API's list object, saying whether more pauses follow.
    const pending = JSON.parse(json.stdout);
    expect(pending).toMatchObject({ object: 'list', has_more: false });
    expect(pending.data.map((pause: { id: string }) => pause.id)).toEqual([first.id]);
    const page = JSON.parse(firstOfTwo.stdout);
    expect(page).toMatchObject({ object: 'list', has_more: true });
    expect(page.data.map((pause: { id: string }) => pause.id)).toEqual([second.id]);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(/status: +responded/);
    expect(get.stdout).toMatch(/choice: +reject/);
    expect(get.stdout).toMatch(/text: +no/);
    expect(get.stdout).toMatch(/metadata: +\{"ticket":9\}/);
    expect(JSON.parse(getJson.stdout)).toMatchObject({ id: first.id, status: 'pending' });

    const cancel = await runCli(['pauses', 'cancel', first.id], env);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toBe(`Cancelled ${first.id}\n`);
    const again = await runCli(['pauses', 'cancel', first.id, '--json'], env);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error).toMatchObject({ code: 'pause_not_pending', status: 409 });
  });

  it('waits with get --wait until the pause ends', async () => {
    const pause = await createPause(service.url, dev.test, { expires_in: 1 });
    const result = await runCli(['pauses', 'get', pause.id, '--wait', '10s', '--json'], env);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: pause.id, status: 'timed_out' });
  });

  it('says what is wrong, with exit 1 for a refusal and 2 for bad usage', async () => {
    const [missing, usage, noId, badStatus, empty] = await Promise.all([
      runCli(['pauses', 'get', 'pause_nope'], env),
      runCli(['pauses', 'frob'], env),
      runCli(['pauses', 'cancel'], env),
      runCli(['pauses', 'list', '--status', 'open'], env),
      runCli(['pauses', 'list'], { ...env, PAUSEPOINT_API_KEY: (await registerAccount(service.url)).test }),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not_found, HTTP 404/);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/unknown action "pauses frob"/);
    expect(noId.code).toBe(2);
    expect(badStatus.code).toBe(2);
    expect(empty.stdout).toBe('No pauses.\n');
  });
});

describe('webhooks', () => {
  it('adds with a generated secret, lists, shows deliveries and removes', async () => {
    const add = await runCli(['webhooks', 'add', 'https://127.0.0.1:9/hook', '--event', 'pause.responded'], env);
    expect(add.code).toBe(0);
    const [, id] = add.stdout.match(
      /^Added (wh_\w+): https:\/\/127\.0\.0\.1:9\/hook \(pause\.responded, test mode\)$/m,
    )!;
    expect(add.stdout).toMatch(/^Secret: whsec_[A-Za-z0-9+/]{32}$/m);
    expect(add.stderr).toMatch(/shown once/);

    const addJson = await runCli(
      ['webhooks', 'add', 'https://127.0.0.1:9/other', '--secret', 'whsec_mine_0123456789', '--json'],
      env,
    );
    const other = JSON.parse(addJson.stdout);
    expect(other).toMatchObject({
      object: 'webhook',
      events: ['pause.responded', 'pause.timed_out', 'pause.cancelled'],
    });
    expect(other).not.toHaveProperty('secret');

    const [list, listJson, deliveries, deliveriesJson] = await Promise.all([
      runCli(['webhooks', 'list'], env),
      runCli(['webhooks', 'list', '--json'], env),
      runCli(['webhooks', 'deliveries', id!], env),
      runCli(['webhooks', 'deliveries', id!, '--json'], env),
    ]);
    expect(list.stdout).toMatch(
      new RegExp(`^${id}\\s+test\\s+active\\s+pause\\.responded\\s+https://127\\.0\\.0\\.1:9/hook$`, 'm'),
    );
    const webhookList = JSON.parse(listJson.stdout);
    expect(webhookList).toMatchObject({ object: 'list', has_more: false });
    expect(webhookList.data.map((webhook: { id: string }) => webhook.id).sort()).toEqual([id, other.id].sort());
    expect(deliveries.stdout).toBe('No deliveries.\n');
    expect(JSON.parse(deliveriesJson.stdout)).toEqual({ object: 'list', data: [], has_more: false });

    const rotate = await runCli(['webhooks', 'rotate-secret', id!], env);
    expect(rotate.code, rotate.stderr).toBe(0);
    expect(rotate.stdout).toMatch(new RegExp(`^Rotated ${id}\nSecret: whsec_[A-Za-z0-9+/]{32}\n$`));
    expect(rotate.stderr).toMatch(/shown once; the old one also signs until 20/);
    const [enable, recover, recoverJson, noSince, badSince] = await Promise.all([
      runCli(['webhooks', 'enable', id!], env),
      runCli(['webhooks', 'recover', id!, '--since', '2026-01-01T00:00:00Z'], env),
      runCli(
        ['webhooks', 'recover', id!, '--since', '2026-01-01T00:00:00Z', '--until', '2026-01-02T00:00:00Z', '--json'],
        env,
      ),
      runCli(['webhooks', 'recover', id!], env),
      runCli(['webhooks', 'recover', id!, '--since', 'yesterday'], env),
    ]);
    expect(enable.stdout).toBe(`Enabled ${id}\n`);
    expect(recover.stdout).toBe(`Recovered ${id}: 0 re-queued, 0 missed added\n`);
    expect(JSON.parse(recoverJson.stdout)).toEqual({ object: 'recovery', webhook_id: id, requeued: 0, added: 0 });
    expect(noSince.code).toBe(2);
    expect(noSince.stderr).toMatch(/--since/);
    expect(badSince.code).toBe(1);
    expect(badSince.stderr).toMatch(/since/);

    const [rm, rmJson] = await Promise.all([
      runCli(['webhooks', 'rm', id!], env),
      runCli(['webhooks', 'delete', other.id, '--json'], env),
    ]);
    expect(rm.stdout).toBe(`Deleted ${id}\n`);
    expect(JSON.parse(rmJson.stdout)).toEqual({ id: other.id, object: 'webhook', deleted: true });
    expect((await runCli(['webhooks', 'list'], env)).stdout).toBe('No webhooks.\n');
  });

  it('refuses bad input with the service’s reason', async () => {
    const [privateUrl, badEvent, gone] = await Promise.all([
      runCli(['webhooks', 'add', 'https://10.1.2.3/hook'], env),
      runCli(['webhooks', 'add', 'https://127.0.0.1:9/x', '--event', 'pause.exploded'], env),
      runCli(['webhooks', 'rm', 'wh_nope', '--json'], env),
    ]);
    expect(privateUrl.code).toBe(1);
    expect(privateUrl.stderr).toMatch(/invalid_webhook_url, HTTP 400/);
    expect(badEvent.code).toBe(2);
    expect(badEvent.stderr).toMatch(/--event must be one of/);
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout).error.code).toBe('not_found');
  });
});
