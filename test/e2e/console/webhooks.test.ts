import { createHmac } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { pauseDeliveriesQuery } from '../../../src/store/deliveries.js';
import { ConsoleClient, csrfIn } from '../../helpers/console.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { webhookTests } from '../../helpers/webhook-service.js';

// The console's webhooks over HTTP (no browser): adding one (the secret made
// by the console, shown once, and the one deliveries are signed with), the
// API's rules and cap as form errors, removing in two steps, another
// developer's webhook, cross-site posts, a webhook's delivery log with its
// status filter, a pause's deliveries, and redelivering a failed one. Real
// deliveries go over TLS to a receiver whose throw-away CA the service trusts.

const webhooks = webhookTests({ env: { WEBHOOK_RETRY_SCHEDULE_MS: '100' } });

async function signedIn(): Promise<{ account: Account; client: ConsoleClient }> {
  const account = await registerAccount(webhooks.service.url);
  const client = new ConsoleClient(webhooks.service.url);
  await client.signIn(account.email, account.password);
  return { account, client };
}

const webhooksOf = async (key: string) =>
  (await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: key })).body.data as Array<{
    id: string;
    url: string;
  }>;

const deliveriesOf = async (key: string, webhookId: string) =>
  (await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhookId}/deliveries`, { token: key })).body.data as Array<
    Record<string, any>
  >;

/** The webhook id a page's add form was shown with, and its seal. */
const formIdIn = (html: string) => /name="webhook_id" value="(wh_[0-9a-z]{26})"/.exec(html)![1]!;
const formSealIn = (html: string) => /name="webhook_id_seal" value="([^"]+)"/.exec(html)![1]!;

/** Adds a test webhook through the console's form, as a browser sends it; returns the reply. */
async function addByForm(client: ConsoleClient, form: Record<string, string>) {
  const page = await client.get('/console/webhooks?mode=test');
  const fields = {
    csrf: csrfIn(page.text),
    mode: 'test',
    webhook_id: formIdIn(page.text),
    webhook_id_seal: formSealIn(page.text),
  };
  return client.post('/console/webhooks', { ...fields, ...form });
}

const alertIn = (html: string) => /<p class="notice error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

async function cancelledPause(key: string): Promise<string> {
  const pause = await createPause(webhooks.service.url, key);
  expect((await call(webhooks.service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: key })).status).toBe(200);
  return pause.id;
}

describe('adding', () => {
  it('adds a webhook, shows its signing secret once, and deliveries are signed with it', async () => {
    const { account, client } = await signedIn();
    const url = `${webhooks.receiver.url}/hook`;
    const added = await addByForm(client, { url, 'event:pause.cancelled': 'on', 'event:pause.responded': 'on' });
    expect(added.status, added.text).toBe(201);
    const secret = /<code data-copy="" data-copy-label="the signing secret">(whsec_[A-Za-z0-9+/]{32})<\/code>/.exec(
      added.text,
    )?.[1];
    expect(secret).toBeDefined();
    expect(added.headers.get('cache-control')).toBe('no-store');

    const [webhook] = await webhooksOf(account.test);
    expect(webhook).toMatchObject({ url, events: ['pause.responded', 'pause.cancelled'] });
    expect(await webhooksOf(account.live)).toEqual([]);

    // A reload (or any later page) no longer shows it.
    const list = await client.get('/console/webhooks?mode=test');
    expect(list.status).toBe(200);
    expect(list.text).toContain(url);
    expect(list.text).not.toContain(secret!);
    expect(list.text).not.toContain('whsec_');
    expect((await client.get(`/console/webhooks/${webhook!.id}?mode=test`)).text).not.toContain(secret!);

    // The secret shown is the one the deliveries are signed with.
    await cancelledPause(account.test);
    // The receiver is the file's: an earlier test's retry may arrive first.
    const [request] = await webhooks.receiver.waitForRequests(1, undefined, (r) => r.path === '/hook');
    const expected = `sha256=${createHmac('sha256', secret!).update(request!.body).digest('hex')}`;
    expect(request!.headers['x-service-signature']).toBe(expected);
    // A whsec_ secret the Standard Webhooks libraries take as it is.
    const headers = request!.headers as Record<string, string>;
    expect(new StandardWebhook(secret!).verify(request!.body.toString('utf8'), headers)).toBeTruthy();
  });

  it('adds one webhook for a form sent twice (a reload of the answer), and shows no secret the second time', async () => {
    const { account, client } = await signedIn();
    const page = await client.get('/console/webhooks?mode=test');
    const webhookId = formIdIn(page.text);
    const form = {
      csrf: csrfIn(page.text),
      mode: 'test',
      webhook_id: webhookId,
      webhook_id_seal: formSealIn(page.text),
      url: `${webhooks.receiver.url}/twice`,
      'event:pause.cancelled': 'on',
    };
    const first = await client.post('/console/webhooks', form);
    expect(first.status).toBe(201);
    expect(first.text).toContain('whsec_');
    const again = await client.post('/console/webhooks', form);
    expect(again.status).toBe(400);
    expect(alertIn(again.text)).toBe('This form was sent already: the webhook was added then.');
    expect(again.text).not.toContain('whsec_');
    expect((await webhooksOf(account.test)).map((w) => w.id)).toEqual([webhookId]);
    // A fresh form adds another.
    expect(
      (await addByForm(client, { url: `${webhooks.receiver.url}/twice`, 'event:pause.cancelled': 'on' })).status,
    ).toBe(201);
    expect(await webhooksOf(account.test)).toHaveLength(2);
  });

  it('gives no say over the id to a form it did not seal: another account’s id is neither taken nor revealed', async () => {
    const alice = await signedIn();
    expect(
      (await addByForm(alice.client, { url: `${webhooks.receiver.url}/a`, 'event:pause.cancelled': 'on' })).status,
    ).toBe(201);
    const [theirs] = await webhooksOf(alice.account.test);
    const { account, client } = await signedIn();
    const page = await client.get('/console/webhooks?mode=test');
    for (const [id, seal] of [
      [theirs!.id, formSealIn(page.text)], // another account's id under this form's seal
      [theirs!.id, ''], // no seal
      ['wh_00000000000000000000000000', formSealIn(page.text)], // an id that sorts first
    ] as const) {
      const sent = await client.post('/console/webhooks', {
        csrf: csrfIn(page.text),
        mode: 'test',
        webhook_id: id,
        webhook_id_seal: seal,
        url: `${webhooks.receiver.url}/b`,
        'event:pause.cancelled': 'on',
      });
      expect(sent.status, sent.text).toBe(201);
    }
    const ids = (await webhooksOf(account.test)).map((w) => w.id);
    expect(ids).toHaveLength(3);
    expect(ids).not.toContain(theirs!.id);
    expect(ids).not.toContain('wh_00000000000000000000000000');
  });

  it('shows the API rules as errors on the form, keeping what was typed, and adds nothing', async () => {
    const { account, client } = await signedIn();
    const privateUrl = await addByForm(client, { url: 'https://10.0.0.1/hook', 'event:pause.cancelled': 'on' });
    expect(privateUrl.status).toBe(400);
    expect(alertIn(privateUrl.text)).toBeTruthy();
    expect(privateUrl.text).toContain('value="https://10.0.0.1/hook"');
    expect(privateUrl.text).toContain('name="event:pause.cancelled" value="on" checked=""');

    const loopback = await addByForm(client, { url: 'https://[::1]:8443/hook', 'event:pause.cancelled': 'on' });
    expect(loopback.status).toBe(400);
    expect(alertIn(loopback.text)).toContain('pausepoint listen');
    expect(alertIn(loopback.text)).toContain('WEBHOOK_ALLOWED_NETWORKS');

    const notHttps = await addByForm(client, { url: 'http://127.0.0.1/hook', 'event:pause.cancelled': 'on' });
    expect(notHttps.status).toBe(400);
    expect(alertIn(notHttps.text)).toBeTruthy();

    const noEvents = await addByForm(client, { url: `${webhooks.receiver.url}/hook` });
    expect(noEvents.status).toBe(400);
    expect(alertIn(noEvents.text)).toBe('Tick at least one event.');
    expect(await webhooksOf(account.test)).toEqual([]);
  });

  it('refuses a webhook over the cap of 20 a mode, as the API does', async () => {
    const { account, client } = await signedIn();
    for (let i = 0; i < 20; i++) {
      const reply = await call(webhooks.service.url, 'POST', '/v1/webhooks', {
        token: account.test,
        body: {
          url: `${webhooks.receiver.url}/hook/${i}`,
          events: ['pause.cancelled'],
          secret: 'whsec_0123456789abcdef',
        },
      });
      expect(reply.status).toBe(201);
    }
    const over = await addByForm(client, { url: `${webhooks.receiver.url}/hook/20`, 'event:pause.cancelled': 'on' });
    expect(over.status).toBe(400);
    expect(alertIn(over.text)).toBe('A test account has at most 20 webhooks.');
    expect(await webhooksOf(account.test)).toHaveLength(20);
    // The live mode has its own 20.
    const csrf = await client.csrf('/console/webhooks');
    const live = await client.post('/console/webhooks', {
      csrf,
      mode: 'live',
      url: `${webhooks.receiver.url}/hook`,
      'event:pause.cancelled': 'on',
    });
    expect(live.status).toBe(201);
    expect(await webhooksOf(account.live)).toHaveLength(1);
  });
});

describe('removing', () => {
  it('asks first, and removes only on the confirmation form with its CSRF token', async () => {
    const { account, client } = await signedIn();
    expect(
      (await addByForm(client, { url: `${webhooks.receiver.url}/gone`, 'event:pause.cancelled': 'on' })).status,
    ).toBe(201);
    const [webhook] = await webhooksOf(account.test);
    const path = `/console/webhooks/${webhook!.id}/remove`;

    const ask = await client.get(`${path}?mode=test`);
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('Remove the webhook?');
    expect(await webhooksOf(account.test)).toHaveLength(1);

    expect((await client.post(path, { mode: 'test' })).status).toBe(403);
    expect((await client.post(path, { mode: 'test', csrf: 'not-the-token' })).status).toBe(403);
    expect(await webhooksOf(account.test)).toHaveLength(1);

    const done = await client.post(path, { mode: 'test', csrf: csrfIn(ask.text) });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/console/webhooks?mode=test&removed=1');
    expect(await webhooksOf(account.test)).toEqual([]);
    expect((await client.get(done.location!)).text).toContain('The webhook is removed.');
    expect((await client.post(path, { mode: 'test', csrf: csrfIn(ask.text) })).status).toBe(404);
  });
});

describe('another developer and other sites', () => {
  it("answers 404 for another developer's webhook and changes nothing", async () => {
    const { account: alice } = await signedIn();
    const { client: mallory } = await signedIn();
    const reply = await call(webhooks.service.url, 'POST', '/v1/webhooks', {
      token: alice.test,
      body: { url: `${webhooks.receiver.url}/alice`, events: ['pause.cancelled'], secret: 'whsec_0123456789abcdef' },
    });
    const id = reply.body.id as string;
    webhooks.receiver.setDefault({ status: 500 });
    await cancelledPause(alice.test);
    let deliveryId = '';
    await eventually(async () => {
      const [delivery] = await deliveriesOf(alice.test, id);
      expect(delivery?.status).toBe('failed');
      deliveryId = delivery!.id;
    });

    const csrf = await mallory.csrf('/console/webhooks');
    for (const mode of ['live', 'test']) {
      expect((await mallory.get(`/console/webhooks/${id}?mode=${mode}`)).status).toBe(404);
      expect((await mallory.get(`/console/webhooks/${id}/remove?mode=${mode}`)).status).toBe(404);
      expect((await mallory.post(`/console/webhooks/${id}/remove`, { csrf, mode })).status).toBe(404);
      const redeliver = await mallory.post(`/console/webhooks/${id}/deliveries/${deliveryId}/redeliver`, {
        csrf,
        mode,
      });
      expect(redeliver.status).toBe(404);
      for (const action of ['rotate-secret', 'enable']) {
        expect((await mallory.post(`/console/webhooks/${id}/${action}`, { csrf, mode })).status).toBe(404);
      }
      expect((await mallory.get(`/console/webhooks/${id}/deliveries/${deliveryId}?mode=${mode}`)).status).toBe(404);
    }
    expect(await webhooksOf(alice.test)).toHaveLength(1);
    expect((await deliveriesOf(alice.test, id))[0]).toMatchObject({ status: 'failed', attempts: 2 });
  });

  it('refuses cross-site posts, and nothing changes', async () => {
    const { account, client } = await signedIn();
    const csrf = await client.csrf('/console/webhooks?mode=test');
    const form = { csrf, mode: 'test', url: `${webhooks.receiver.url}/hook`, 'event:pause.cancelled': 'on' };
    expect((await client.post('/console/webhooks', form, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await client.post('/console/webhooks', form, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect(await webhooksOf(account.test)).toEqual([]);

    expect((await client.post('/console/webhooks', form)).status).toBe(201);
    const [webhook] = await webhooksOf(account.test);
    const remove = `/console/webhooks/${webhook!.id}/remove`;
    expect((await client.post(remove, { csrf, mode: 'test' }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await client.post(remove, { csrf, mode: 'test' }, { 'sec-fetch-site': 'same-site' })).status).toBe(403);
    expect(await webhooksOf(account.test)).toHaveLength(1);
  });
});

describe('deliveries', () => {
  it('lists deliveries newest first with a status filter, on the pause too, and redelivers a failed one', async () => {
    const { account, client } = await signedIn();
    await addByForm(client, { url: `${webhooks.receiver.url}/log`, 'event:pause.cancelled': 'on' });
    const [webhook] = await webhooksOf(account.test);
    const log = `/console/webhooks/${webhook!.id}?mode=test`;

    webhooks.receiver.setDefault({ status: 500 });
    const failedPause = await cancelledPause(account.test);
    await eventually(async () => expect((await deliveriesOf(account.test, webhook!.id))[0]?.status).toBe('failed'));
    webhooks.receiver.setDefault({ status: 200 });
    const deliveredPause = await cancelledPause(account.test);
    await eventually(async () => {
      expect((await deliveriesOf(account.test, webhook!.id)).map((d) => d.status)).toEqual(['succeeded', 'failed']);
    });
    const [succeeded, failed] = await deliveriesOf(account.test, webhook!.id);

    const rowIds = (html: string) => [...html.matchAll(/<tr id="(dlv_[0-9a-z]+)">/g)].map((m) => m[1]);
    const all = await client.get(log);
    expect(all.status).toBe(200);
    expect(rowIds(all.text)).toEqual([succeeded!.id, failed!.id]);
    expect(all.text).toContain('HTTP 500');
    const onlyFailed = await client.get(`${log}&status=failed`);
    expect(rowIds(onlyFailed.text)).toEqual([failed!.id]);
    expect(onlyFailed.text).toContain('<option value="failed" selected="">');
    expect(rowIds((await client.get(`${log}&status=succeeded`)).text)).toEqual([succeeded!.id]);
    expect(rowIds((await client.get(`${log}&status=pending`)).text)).toEqual([]);
    // Only a failed delivery has a Redeliver button.
    expect(all.text.match(/>\s*Redeliver\s*</g)).toHaveLength(1);

    // The pause page lists its event's delivery and links to the log.
    const pausePage = await client.get(`/console/pauses/${failedPause}?mode=test`);
    expect(pausePage.text).toContain('Webhook deliveries');
    expect(pausePage.text).toContain(`href="/console/webhooks/${webhook!.id}?mode=test#${failed!.id}"`);
    expect(pausePage.text).toContain('HTTP 500');
    expect((await client.get(`/console/pauses/${deliveredPause}?mode=test`)).text).toContain('HTTP 200');

    // Redeliver: without the CSRF token nothing happens; with it the delivery is queued and sent.
    const redeliver = `/console/webhooks/${webhook!.id}/deliveries/${failed!.id}/redeliver`;
    expect((await client.post(redeliver, { mode: 'test' })).status).toBe(403);
    webhooks.receiver.reset();
    const done = await client.post(redeliver, { mode: 'test', csrf: csrfIn(all.text) });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/console/webhooks/${webhook!.id}?mode=test&redelivered=${failed!.id}#${failed!.id}`);
    await webhooks.receiver.waitForRequests(1, undefined, (r) => r.path === '/log');
    await eventually(async () => {
      const again = (await deliveriesOf(account.test, webhook!.id)).find((d) => d.id === failed!.id);
      expect(again).toMatchObject({ status: 'succeeded', last_status_code: 200 });
    });
    expect(rowIds((await client.get(`${log}&status=failed`)).text)).toEqual([]);

    // A delivery that has not failed is not sent again: the page says why.
    const notFailed = await client.post(redeliver, { mode: 'test', csrf: csrfIn(all.text) });
    expect(notFailed.status).toBe(409);
    expect(alertIn(notFailed.text)).toBe('Only a failed delivery can be retried; this one is succeeded.');
  });

  it('shows a redelivered delivery as queued again, not with the last round’s status code', async () => {
    const { account, client } = await signedIn();
    await addByForm(client, { url: `${webhooks.receiver.url}/again`, 'event:pause.cancelled': 'on' });
    const [webhook] = await webhooksOf(account.test);
    webhooks.receiver.setDefault({ status: 503 });
    await cancelledPause(account.test);
    await eventually(async () => expect((await deliveriesOf(account.test, webhook!.id))[0]?.status).toBe('failed'));
    const [failed] = await deliveriesOf(account.test, webhook!.id);
    const log = `/console/webhooks/${webhook!.id}?mode=test`;
    expect((await client.get(log)).text).toContain('HTTP 503');

    // The receiver now holds the new attempt open: the delivery is in the queue or on its way.
    webhooks.receiver.setDefault({ hang: true });
    const done = await client.post(`/console/webhooks/${webhook!.id}/deliveries/${failed!.id}/redeliver`, {
      mode: 'test',
      csrf: await client.csrf(log),
    });
    expect(done.status).toBe(303);
    const page = await client.get(done.location!.split('#')[0]!);
    const row = new RegExp(`<tr id="${failed!.id}">(.*?)</tr>`, 's').exec(page.text)?.[1] ?? '';
    expect(row).toContain('Queued for redelivery');
    expect(row).not.toContain('HTTP 503');
    webhooks.receiver.setDefault({ status: 200 });
  });

  it('pages through a long log with the cursor', async () => {
    const { account, client } = await signedIn();
    await addByForm(client, { url: `${webhooks.receiver.url}/many`, 'event:pause.cancelled': 'on' });
    const [webhook] = await webhooksOf(account.test);
    for (let i = 0; i < 27; i++) await cancelledPause(account.test);
    const api = await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhook!.id}/deliveries?limit=100`, {
      token: account.test,
    });
    const ids = (api.body.data as Array<{ id: string }>).map((d) => d.id);
    expect(ids).toHaveLength(27);
    const rowIds = (html: string) => [...html.matchAll(/<tr id="(dlv_[0-9a-z]+)">/g)].map((m) => m[1]);
    const first = await client.get(`/console/webhooks/${webhook!.id}?mode=test`);
    expect(rowIds(first.text)).toEqual(ids.slice(0, 25));
    const older = /href="([^"]+)" rel="next"/.exec(first.text)![1]!.replaceAll('&amp;', '&');
    expect(older).toBe(`/console/webhooks/${webhook!.id}?mode=test&after=${ids[24]}`);
    const second = await client.get(older);
    expect(rowIds(second.text)).toEqual(ids.slice(25));
    expect(second.text).not.toContain('rel="next"');
  });
});

it("finds a pause's deliveries by index: events_by_pause, then deliveries_by_event", async () => {
  const { db, dialect } = webhooks.service.store;
  const query = pauseDeliveriesQuery(db, { developerId: 'dev_x', mode: 'test' }, 'pause_x').compile();
  const plan =
    dialect === 'postgres'
      ? await db.transaction().execute(async (trx) => {
          // The tables are small here: make the planner show what it would use on big ones.
          await sql`set local enable_seqscan = off`.execute(trx);
          const { rows } = await trx.executeQuery(CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]));
          return rows.map((row) => Object.values(row as object).join(' ')).join('\n');
        })
      : (await db.executeQuery(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]))).rows
          .map((row) => (row as { detail: string }).detail)
          .join('\n');
  expect(plan).toContain('events_by_pause');
  expect(plan).toContain('deliveries_by_event');
});

describe('rotation, disabling and attempts', () => {
  it('rotates the secret on a CSRF-checked post, showing the new one once; deliveries carry both signatures', async () => {
    const { account, client } = await signedIn();
    await addByForm(client, { url: `${webhooks.receiver.url}/rotate`, 'event:pause.cancelled': 'on' });
    const [webhook] = await webhooksOf(account.test);
    const page = `/console/webhooks/${webhook!.id}?mode=test`;
    const csrf = await client.csrf(page);
    const path = `/console/webhooks/${webhook!.id}/rotate-secret`;
    expect((await client.post(path, { csrf, mode: 'test' }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await client.post(path, { csrf: 'forged', mode: 'test' })).status).toBe(403);
    const rotated = await client.post(path, { csrf, mode: 'test' });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    const secret = /data-copy-label="the new signing secret">(whsec_[A-Za-z0-9+/]{32})<\/code>/.exec(rotated.text)?.[1];
    expect(secret).toBeDefined();
    expect((await client.get(page)).text).not.toContain(secret!);

    await cancelledPause(account.test);
    // This webhook's delivery (the receiver is the file's: an earlier test's retry may come first).
    const [request] = await webhooks.receiver.waitForRequests(1, undefined, (r) => r.path === '/rotate');
    const headers = request!.headers as Record<string, string>;
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new StandardWebhook(secret!).verify(request!.body.toString('utf8'), headers)).toBeTruthy();
  });

  it('shows a webhook disabled by a 410 with why, enables it, and shows each attempt of a delivery', async () => {
    const { account, client } = await signedIn();
    await addByForm(client, { url: `${webhooks.receiver.url}/gone`, 'event:pause.cancelled': 'on' });
    const [webhook] = await webhooksOf(account.test);
    const page = `/console/webhooks/${webhook!.id}?mode=test`;
    webhooks.receiver.respondWith({ status: 410, body: 'no such <receiver>' });
    await cancelledPause(account.test);
    await eventually(async () => expect((await client.get(page)).text).toContain('Disabled'));
    const disabled = await client.get(page);
    expect(disabled.text).toContain('The receiver answered 410 Gone.');
    expect(disabled.text).toContain(`action="/console/webhooks/${webhook!.id}/enable"`);
    expect((await client.get('/console/webhooks?mode=test')).text).toContain(
      '<span class="status failed">Disabled</span>',
    );

    const [delivery] = await deliveriesOf(account.test, webhook!.id);
    const attempts = await client.get(`/console/webhooks/${webhook!.id}/deliveries/${delivery!.id}?mode=test`);
    expect(attempts.status).toBe(200);
    expect(attempts.text).toContain('<td data-label="Status">410</td>');
    // The receiver's answer, escaped.
    expect(attempts.text).toContain('no such &lt;receiver&gt;');
    expect(attempts.text).not.toContain('<receiver>');
    expect(disabled.text).toContain(`/console/webhooks/${webhook!.id}/deliveries/${delivery!.id}?mode=test`);

    const csrf = await client.csrf(page);
    const enabled = await client.post(`/console/webhooks/${webhook!.id}/enable`, { csrf, mode: 'test' });
    expect(enabled.status).toBe(200);
    expect(enabled.text).toContain('The webhook is enabled');
    expect(enabled.text).not.toContain(`action="/console/webhooks/${webhook!.id}/enable"`);
    expect((await webhooksOf(account.test))[0]).toMatchObject({ status: 'active' });
  });
});
