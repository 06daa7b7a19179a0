import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.destroy());

const scrape = async () => {
  const response = await fetch(`${service.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  return response.text();
};

/** The value of one sample line, e.g. sample(text, 'pausepoint_pauses{status="pending"}'). */
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

it('reports requests by route pattern and status, pauses by state, queues and timeout lag', async () => {
  const dev = await registerAccount(service.url);
  const kept = await createPause(service.url, dev.test);
  const cancelled = await createPause(service.url, dev.test);
  await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: dev.test });
  await call(service.url, 'GET', `/v1/pause/${kept.id}`, { token: dev.test });
  await call(service.url, 'GET', '/v1/pause/pause_nope', { token: dev.test });
  await createPause(service.url, dev.test, { expires_in: 1 });

  await eventually(async () => {
    const text = await scrape();
    expect(sample(text, 'pausepoint_timeout_lag_seconds_count')).toBe(1);
  }, 3000);
  const text = await scrape();
  expect(sample(text, 'pausepoint_http_requests_total{method="POST",route="/v1/pause",status="201"}')).toBe(3);
  expect(sample(text, 'pausepoint_http_requests_total{method="GET",route="/v1/pause/:id",status="200"}')).toBe(1);
  expect(sample(text, 'pausepoint_http_requests_total{method="GET",route="/v1/pause/:id",status="404"}')).toBe(1);
  expect(sample(text, 'pausepoint_pauses{status="pending"}')).toBe(1);
  expect(sample(text, 'pausepoint_pauses{status="cancelled"}')).toBe(1);
  expect(sample(text, 'pausepoint_pauses{status="timed_out"}')).toBe(1);
  expect(sample(text, 'pausepoint_outbox_depth{queue="deliveries"}')).toBe(0);
  expect(sample(text, 'pausepoint_outbox_oldest_due_age_seconds{queue="notifications"}')).toBe(0);
  expect(sample(text, 'pausepoint_overdue_pauses')).toBe(0);
  // Under a second of lag for that timeout.
  expect(sample(text, 'pausepoint_timeout_lag_seconds_bucket{le="1"}')).toBe(1);
  expect(text).toContain('pausepoint_http_request_duration_seconds_bucket');
  // Nothing secret in it.
  expect(text).not.toContain(dev.test);
  expect(text).not.toContain(kept.id);
});
