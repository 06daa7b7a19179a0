import type { FastifyInstance } from 'fastify';
import { PLAN_HISTORY_LENGTH, type PlanOverview, planOverview } from '../actions/usage.js';
import { documentOf, Layout, Time } from './layout.js';
import { type SignedIn, signedInOf } from './session.js';

// The developer's plan, this month's live pauses against its quota, and the
// plan's history (the changes billing events made, newest first): the same
// numbers as GET /v1/billing, through the same action.

function Quota({ used, quota }: { used: number; quota: number | null }) {
  if (quota === null) {
    return (
      <p id="quota-text" class="quota">
        <strong>{used}</strong> {`live pause${used === 1 ? '' : 's'} this month (this plan has no limit)`}
      </p>
    );
  }
  return (
    <>
      <label for="quota">Live pauses this month</label>
      <meter id="quota" min={0} max={Math.max(quota, 1)} value={used} high={quota * 0.8} aria-describedby="quota-text">
        {`${used} of ${quota}`}
      </meter>
      <p id="quota-text" class="quota">
        <strong>{used}</strong> {`of ${quota} pauses this month`}
      </p>
    </>
  );
}

function UsagePage({ signedIn, overview }: { signedIn: SignedIn; overview: PlanOverview }) {
  const { plan, status, usage, changes } = overview;
  return (
    <Layout title="Usage and plan" signedIn={signedIn} section="usage">
      <h1>Usage and plan</h1>
      <div class="card">
        <h2>This month</h2>
        <dl class="facts">
          <dt>Plan</dt>
          <dd id="plan">{status ? `${plan} (${status})` : plan}</dd>
          <dt>Period</dt>
          <dd>
            <time datetime={usage.period_start}>{usage.period_start.slice(0, 10)}</time>
            {' until '}
            <time datetime={usage.period_end}>{`${usage.period_end.slice(0, 10)} 00:00`}</time> UTC
          </dd>
        </dl>
        <div class="field quota-bar">
          <Quota used={usage.live_pauses_used} quota={usage.live_pauses_quota} />
        </div>
        <p class="hint">Only live pauses count; test pauses never do.</p>
      </div>
      <div class="card">
        <h2>Billing history</h2>
        {changes.length === 0 ? (
          <p class="empty">No billing events yet: the plan has not changed since the account was made.</p>
        ) : (
          <table class="history">
            <caption class="muted">{`Plan changes, newest first (the latest ${PLAN_HISTORY_LENGTH})`}</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Plan</th>
                <th scope="col">Status</th>
                <th scope="col">Billing event</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((change) => (
                <tr>
                  <td>
                    <Time at={change.created_at} />
                  </td>
                  <td>{`${change.from_plan} → ${change.to_plan}`}</td>
                  <td>{change.status ?? '—'}</td>
                  <td class="event">
                    {change.event_type} <code>{change.event_id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </Layout>
  );
}

export function usagePage(app: FastifyInstance): void {
  app.get('/usage', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const overview = await planOverview(app.services, signedIn.developer.id);
    return reply
      .type('text/html; charset=utf-8')
      .send(documentOf(<UsagePage signedIn={signedIn} overview={overview} />));
  });
}
